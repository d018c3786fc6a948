#!/usr/bin/perl
# raw2csv.pl CPU < RAW: the CSV `svmtrace-dump dump --regs` must print for a
# file packed from RAW (168-byte records), derived here independently of the
# library: first record session_start, then instructions, then the session
# end that pack appends (next sequence, last state, reason 0).
use strict;
use warnings;

my $cpu = shift // 0;
my @gprs = qw(rax rbx rcx rdx rsi rdi rbp rsp r8 r9 r10 r11 r12 r13 r14 r15);
binmode STDIN;
print join(',', qw(cpu sequence kind rip rflags cr3 reason), @gprs), "\n";
my ($n, @last) = (0);
local $/ = \168;
while (my $rec = <STDIN>) {
	die "short record\n" if length($rec) != 168;
	my ($seq, $tsc, $rip, $rflags, $cr3, @g) = unpack('Q<21', $rec);
	my $kind = $n++ ? 'instruction' : 'session_start';
	print join(',', $cpu, $seq, $kind, map({ sprintf('0x%x', $_) } $rip, $rflags, $cr3), 0,
		map({ sprintf('0x%x', $_) } @g)), "\n";
	@last = ($seq, $rip, $rflags, $cr3, @g);
}
my ($seq, @rest) = @last;
print join(',', $cpu, $seq + 1, 'session_end', map({ sprintf('0x%x', $_) } @rest[0 .. 2]), 0,
	map({ sprintf('0x%x', $_) } @rest[3 .. 18])), "\n";
