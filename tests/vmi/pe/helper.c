/* A DLL for the VMI tests' loader lists. */
__declspec(dllexport) int helper_add(int a, int b)
{
	return a + b;
}
