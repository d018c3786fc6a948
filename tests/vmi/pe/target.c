/*
 * The program whose entry point the VMI tests resolve: an ordinary
 * console program, built with the mingw-w64 CRT so its entry point is the
 * CRT's mainCRTStartup, as in real Windows programs.
 */
#include <stdio.h>

__declspec(dllimport) int helper_add(int a, int b);

int main(int argc, char **argv)
{
	printf("svmtrace VMI test target: %d\n", helper_add(argc, 41));
	return argv[0] ? 0 : 1;
}
