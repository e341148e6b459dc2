#include <stdio.h>
#include <stdlib.h>

void index_from_line(void)
{
    int buffer[10] = {0};
    int n = 0;
    char line[32] = "";
    if (fgets(line, sizeof(line), stdin) != NULL) {
        n = atoi(line);
    }
    if (n >= 0) {
        buffer[n] = 1; // fire
    }
}

int index_from_environment(void)
{
    int table[16] = {0};
    int i = atoi(getenv("SLOT"));
    return table[i]; // fire
}

void index_checked(void)
{
    int buffer[10] = {0};
    int n = 0;
    char line[32] = "";
    if (fgets(line, sizeof(line), stdin) != NULL) {
        n = atoi(line);
    }
    if (n >= 0 && n < 10) {
        buffer[n] = 1; // no-fire
    }
}

int index_constant(void)
{
    int table[16] = {0};
    int i = 3;
    return table[i]; // no-fire
}
