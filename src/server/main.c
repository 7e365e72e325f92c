/* mailsoak-server: placeholder entry point until the reference server lands. */
#include <stdio.h>

int main(void)
{
    fputs("mailsoak-server: not built yet\n", stderr);
    return 2;
}
