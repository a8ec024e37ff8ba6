/* gdb_lib.c - a shared library with line information, for the test's
 * `step` into a library function. */
int gdb_lib_scale(int x);

int gdb_lib_scale(int x)
{
    int scaled = x * 10;
    return scaled + 1;
}
