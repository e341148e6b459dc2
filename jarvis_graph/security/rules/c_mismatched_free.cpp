#include <cstdlib>

void array_with_free()
{
    int *numbers = new int[8];
    numbers[0] = 1;
    free(numbers); // fire
}

void malloc_with_delete()
{
    char *text = (char *)malloc(8);
    if (text == NULL) return;
    delete text; // fire
}

void array_with_delete_array()
{
    int *numbers = new int[8];
    numbers[0] = 1;
    delete[] numbers; // no-fire
}

void malloc_with_free()
{
    char *text = (char *)malloc(8);
    if (text == NULL) return;
    free(text); // no-fire
}
