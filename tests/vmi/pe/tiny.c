/*
 * A CRT-free program (entry point "start"): small enough for the fuzzers'
 * seed images.
 */
void start(void);

void start(void)
{
	for (;;)
		__asm__ volatile("pause");
}
