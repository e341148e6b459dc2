#include <windows.h>
#include <mysql.h>
#include <string.h>

#define PASSWORD "ABCD1234!"
#define DB_PASS "s3cret"

void logon_with_macro(void)
{
    char password[100] = "";
    HANDLE h;
    strcpy(password, PASSWORD);
    if (LogonUserA("user", "domain", password, LOGON32_LOGON_NETWORK, LOGON32_PROVIDER_DEFAULT, &h)) { // fire
        CloseHandle(h);
    }
}

void logon_in_place(HANDLE *h)
{
    LogonUserW(L"user", L"domain", L"hunter2", LOGON32_LOGON_NETWORK, LOGON32_PROVIDER_DEFAULT, h); // fire
}

void connect_db(MYSQL *db)
{
    const char *pw = DB_PASS;
    mysql_real_connect(db, "localhost", "app", pw, "shop", 0, NULL, 0); // fire
}

void logon_from_console(HANDLE *h)
{
    char password[100] = "";
    if (fgets(password, sizeof password, stdin) == NULL) {
        return;
    }
    LogonUserA("user", "domain", password, LOGON32_LOGON_NETWORK, LOGON32_PROVIDER_DEFAULT, h); // no-fire
}

void connect_db_from_env(MYSQL *db)
{
    const char *pw = getenv("DB_PASSWORD");
    mysql_real_connect(db, "localhost", "app", pw, "shop", 0, NULL, 0); // no-fire
}

void connect_db_no_password(MYSQL *db)
{
    mysql_real_connect(db, "localhost", "app", "", "shop", 0, NULL, 0); // no-fire
}

void logon_overwritten(HANDLE *h, const char *typed)
{
    char password[100] = "";
    strcpy(password, PASSWORD);
    strcpy(password, typed);
    LogonUserA("user", "domain", password, LOGON32_LOGON_NETWORK, LOGON32_PROVIDER_DEFAULT, h); // no-fire
}

void logon_default_then_typed(HANDLE *h)
{
    char password[100] = "";
    strcpy(password, PASSWORD);
    if (fgets(password, sizeof password, stdin) == NULL) {
        return;
    }
    LogonUserA("user", "domain", password, LOGON32_LOGON_NETWORK, LOGON32_PROVIDER_DEFAULT, h); // no-fire
}
