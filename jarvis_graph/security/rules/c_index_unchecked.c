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

const char *pick_greeting(void)
{
    const char *greetings[3] = {"hello", "hi", "hey"};
    int pick = rand() % 3;
    return greetings[pick]; // no-fire
}

int pick_past_the_end(void)
{
    int slots[4] = {0};
    int pick = rand() % 8;
    return slots[pick]; // fire
}

int pick_signed(void)
{
    int slots[4] = {0};
    int pick = atoi(getenv("SLOT")) % 4;
    return slots[pick]; // fire
}

int pick_after_arms(int fast)
{
    int slots[4] = {0};
    int pick;
    if (fast) {
        pick = rand() % 4;
    } else {
        pick = rand();
    }
    return slots[pick]; // fire
}
