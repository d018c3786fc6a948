#!/usr/bin/env python3
"""What the docs show must exist.

  check_docs.py commands BIN    every command in a code block of README.md,
                                docs/*.md and vm-configs/README.md: a make
                                target, a program of ours (build/bin or a
                                script in the tree) and each long option it
                                is given, as that program's --help (or the
                                script's text) names it; and every `make X`
                                quoted in the text.
  check_docs.py references      every docs/NAME.md and NAME.md link in the
                                tree names a file that exists, and every
                                `docs/NAME.md, "Section"` a heading of it
                                (or a bold title, **Section**).

Prints one line per problem (file:line: what) and exits 1 if there is any.
"""
import os
import re
import shlex
import subprocess
import sys

DOCS_WITH_COMMANDS = ["README.md", "vm-configs/README.md"]
REPO_DIRS = ("tests/", "kmod/", "vm-configs/", "userspace/", "docs/", ".ci/")
PREFIXES = {"sudo", "nice", "env", "exec", "time"}


def doc_files():
    return DOCS_WITH_COMMANDS + sorted(
        os.path.join("docs", f) for f in os.listdir("docs") if f.endswith(".md"))


def code_blocks(path):
    """The code blocks of a Markdown file: lists of (line number, text), with
    backslash-continued lines joined."""
    blocks, fenced, current = [], False, None
    prev_blank = True
    for n, line in enumerate(open(path, encoding="utf-8").read().split("\n"), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            current = [] if fenced else None
            if fenced:
                blocks.append(current)
            continue
        if fenced:
            current.append((n, line.strip()))
        elif line.startswith("    ") and line.strip() and (current is not None or prev_blank):
            if current is None:
                current = []
                blocks.append(current)
            current.append((n, line.strip()))
        elif line.strip():
            current = None
        prev_blank = not line.strip()
    joined = []
    for block in blocks:
        out, pending = [], None
        for n, text in block:
            if pending:
                n, text = pending[0], pending[1] + " " + text
            if text.endswith("\\"):
                pending = (n, text[:-1])
                continue
            pending = None
            out.append((n, text))
        joined.append(out)
    return joined


def blocks_commands(path):
    """The command lines of the code blocks: in a block that shows a session
    (lines starting with `$ `) only those, elsewhere every line."""
    out = []
    for block in code_blocks(path):
        if any(t.startswith("$ ") for _, t in block):
            out += [(n, t[2:]) for n, t in block if t.startswith("$ ")]
        else:
            out += block
    return out


def words(text):
    try:
        lex = shlex.shlex(text, posix=True, punctuation_chars=False)
        lex.whitespace_split = True
        lex.commenters = "#"
        return list(lex)
    except ValueError:
        return text.split("#")[0].split()


def make_targets():
    out = subprocess.run(["make", "-pRrq", "-f", "Makefile", ":"], capture_output=True,
                         text=True).stdout
    targets = set()
    for line in out.split("\n"):
        m = re.match(r"^([^#\s:=%][^:=]*?):(?!=)", line)
        if m:
            targets.update(m.group(1).split())
    return targets


class Checker:
    def __init__(self, bindir):
        self.bin = bindir
        self.targets = make_targets()
        self.helps = {}
        self.problems = []

    def bad(self, where, what):
        self.problems.append(f"{where}: {what}")

    def help_text(self, prog, sub):
        key = (prog, sub)
        if key not in self.helps:
            text = ""
            for argv in ([prog, "--help"], [prog, sub, "--help"] if sub else None):
                if argv:
                    r = subprocess.run(argv, capture_output=True, text=True)
                    text += r.stdout + r.stderr
            self.helps[key] = text
        return self.helps[key]

    def check_make(self, where, args):
        for a in args:
            if a.startswith("-") or "=" in a:
                continue
            if a not in self.targets:
                self.bad(where, f"make target '{a}' does not exist")

    def program(self, word):
        """(kind, path) of a command word that is ours, else None."""
        base = os.path.basename(word)
        if word.startswith("build/bin/") or (("/" not in word) and
                                             os.path.exists(os.path.join(self.bin, word))):
            return "program", os.path.join(self.bin, base)
        if word.startswith(REPO_DIRS):
            return None if word.endswith("/") or os.path.isdir(word) else ("script", word)
        if re.match(r"^(svmtrace(-[a-z0-9]+)*|svmtraced|vmi-[a-z-]+)$", base):
            return "missing", word
        return None

    def check_command(self, where, text):
        w = words(text)
        while w and (w[0] in PREFIXES or re.match(r"^[A-Z_][A-Z0-9_]*=", w[0])):
            w = w[1:]
        if not w:
            return
        if w[0] == "make":
            self.check_make(where, w[1:])
            return
        kind = self.program(w[0])
        if kind is None:
            return
        kind, path = kind
        if kind == "missing" or not os.path.exists(path):
            self.bad(where, f"'{w[0]}' is no program of this tree (build/bin or a script)")
            return
        args = []
        for a in w[1:]:
            if a == "--":
                break
            args.append(a.strip("[]"))
        opts = [a.split("=")[0] for a in args if re.match(r"^--[a-z]", a)]
        if kind == "script":
            text_of = open(path, encoding="utf-8", errors="replace").read()
        else:
            sub = next((a for a in args if re.match(r"^[a-z][a-z-]*$", a)), None)
            text_of = self.help_text(path, sub)
        for o in opts:
            if not re.search(re.escape(o) + r"(?![a-z0-9-])", text_of):
                self.bad(where, f"{w[0]}: option {o} is not in its "
                         + ("text" if kind == "script" else "--help"))

    def commands(self):
        for path in doc_files():
            for n, text in blocks_commands(path):
                self.check_command(f"{path}:{n}", text)
            for n, line in enumerate(open(path, encoding="utf-8"), 1):
                for m in re.finditer(r"`make ([^`]*)`", line):
                    self.check_make(f"{path}:{n}", words(m.group(1)))


def headings(path):
    """The sections a doc names: its headings, and the bold titles of its list items and
    paragraphs (`**Gate.**`)."""
    names = []
    for line in open(path, encoding="utf-8"):
        if line.startswith("#"):
            names.append(re.sub(r"[`*]", "", line.lstrip("#").strip()))
        names += [re.sub(r"`", "", b) for b in re.findall(r"\*\*([^*]+)\*\*", line)]
    return names


def tree_files():
    out = subprocess.run(["git", "ls-files"], capture_output=True, text=True).stdout.split()
    return [f for f in out if f != "CHANGELOG.md" and os.path.isfile(f)]


def references(problems):
    ref = re.compile(r"(docs/[a-z0-9_-]+\.md)(?:,\s*\"([^\"]+)\")?")
    link = re.compile(r"\]\(([A-Za-z0-9_./-]+\.md)\)(?:,\s*\"([^\"]+)\")?")
    for f in tree_files():
        try:
            text = open(f, encoding="utf-8").read()
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.split("\n"), 1):
            found = [(m.group(1), m.group(2)) for m in ref.finditer(line)]
            if f.endswith(".md"):
                found += [(os.path.normpath(os.path.join(os.path.dirname(f), m.group(1))),
                           m.group(2)) for m in link.finditer(line)]
            for doc, section in found:
                if not os.path.isfile(doc):
                    problems.append(f"{f}:{n}: {doc} does not exist")
                elif section and doc.endswith(".md") and not any(
                        h.startswith(section.replace("`", "")) for h in headings(doc)):
                    problems.append(f"{f}:{n}: {doc} has no section \"{section}\"")


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("commands", "references"):
        sys.exit(__doc__)
    if sys.argv[1] == "commands":
        c = Checker(sys.argv[2] if len(sys.argv) > 2 else "build/bin")
        c.commands()
        problems = c.problems
    else:
        problems = []
        references(problems)
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
