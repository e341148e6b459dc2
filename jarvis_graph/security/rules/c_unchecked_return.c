#include <stdio.h>
#include <unistd.h>

void drop_privileges(void)
{
    setuid(1000); // fire
}

void read_block(int fd, char *buf)
{
    read(fd, buf, 16); // fire
}

void drop_privileges_checked(void)
{
    if (setuid(1000) != 0) abort(); // no-fire
}

void read_block_kept(int fd, char *buf)
{
    int n = read(fd, buf, 16); // no-fire
    use(n);
}
