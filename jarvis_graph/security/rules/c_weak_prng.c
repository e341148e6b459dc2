#include <stdlib.h>

int make_session(void)
{
    int session_id = rand(); // fire
    return session_id;
}

void make_nonce(unsigned *out)
{
    unsigned nonce;
    nonce = random() % 1000; // fire
    *out = nonce;
}

int roll_dice(void)
{
    int dice = rand() % 6; // no-fire
    return dice;
}

int make_key_from_device(void)
{
    int key = read_urandom(); // no-fire
    return key;
}
