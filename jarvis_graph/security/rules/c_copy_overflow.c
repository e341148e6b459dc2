#include <stdio.h>
#include <string.h>

void memcpy_too_much(void)
{
    char small[10];
    char big[100];
    memset(big, 'A', 99);
    memcpy(small, big, 50); // fire
}

void loop_past_end(void)
{
    int buf[10];
    int i;
    for (i = 0; i < 11; i++) {
        buf[i] = i; // fire
    }
}

void memcpy_fits(void)
{
    char small[10];
    char big[100];
    memset(big, 'A', 99);
    memcpy(small, big, sizeof(small) - 1); // no-fire
}

void loop_to_the_end(void)
{
    int buf[10];
    int i;
    for (i = 0; i < 10; i++) {
        buf[i] = i; // no-fire
    }
}

void index_known_past_end(void)
{
    int data = 10;
    int buffer[10] = {0};
    buffer[data] = 1; // fire
}

void upper_bound_excludes_the_known_value(void)
{
    int data = 10;
    int buffer[10] = {0};
    if (data < 10)
        buffer[data] = 1; // no-fire
}

void lower_bound_excludes_the_known_value(void)
{
    int i = -1;
    int a[4];
    if (i >= 0) {
        a[i] = 0; // no-fire
    }
    if (i != -1)
        a[i] = 1; // no-fire
}

void the_else_arm_of_an_excluding_condition(void)
{
    int data = 10;
    int buffer[10] = {0};
    if (data >= 10) {
        puts("too large");
    } else {
        buffer[data] = 1; // no-fire
    }
}

void a_condition_that_keeps_the_value(void)
{
    int data = 10;
    int buffer[10] = {0};
    if (data > 5) {
        buffer[data] = 1; // fire
    }
}

void argument_into_small_buffer(int argc, char **argv)
{
    char name[8];
    if (argc > 1) {
        strcpy(name, argv[1]); // fire
    }
    puts(name);
}

void input_line_into_small_buffer(void)
{
    char line[256];
    char name[8];
    if (fgets(line, sizeof line, stdin) == NULL) return;
    strcpy(name, line); // fire
    puts(name);
}

void short_input_into_a_buffer_that_holds_it(void)
{
    char line[8];
    char name[16];
    if (fgets(line, sizeof line, stdin) == NULL) return;
    strcpy(name, line); // no-fire
    puts(name);
}

void trim_last_derived(void)
{
    char word[16] = "";
    int n = 0;
    int last = n - 1;
    if (n > 0) {
        word[last] = '\0'; // no-fire
    }
}

void trim_last_derived_else(void)
{
    char word[16] = "";
    int n = 0;
    int last = n - 1;
    if (n <= 0) {
        return;
    } else {
        word[last] = '\0'; // no-fire
    }
}

void trim_last_derived_twice(void)
{
    char word[16] = "";
    int n = 0;
    int m = n + 1;
    int last = m - 2;
    if (n > 0) {
        word[last] = '\0'; // no-fire
    }
}

void trim_last_unguarded(void)
{
    char word[16] = "";
    int n = 0;
    int last = n - 1;
    word[last] = '\0'; // fire
}
