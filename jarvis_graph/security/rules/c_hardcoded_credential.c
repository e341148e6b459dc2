#include <string.h>

int login(const char *given)
{
    const char *password = "hunter2"; // fire
    return strcmp(given, password) == 0;
}

void set_token(void)
{
    char *api_key;
    api_key = "AKIA-EXAMPLE"; // fire
    use(api_key);
}

int login_from_env(const char *given)
{
    const char *password = getenv("APP_PASSWORD"); // no-fire
    return strcmp(given, password) == 0;
}

void empty_token(void)
{
    const char *token = ""; // no-fire
    use(token);
}

#define ADMIN_PASSWORD "admin123"

int login_macro(const char *given)
{
    const char *password = ADMIN_PASSWORD; // fire
    return strcmp(given, password) == 0;
}
