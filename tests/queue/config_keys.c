/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Prints gpursa's configuration table (queue/gpursa_config.c), one key a
 * line: name, default, environment variable and meaning, separated by tabs.
 * readme_config.sh compares it with README.md and conf/openssl.cnf.
 */
#include <ctype.h>
#include <stdio.h>
#include "queue/gpursa_queue.h"

int main(void)
{
    const gpursa_config_key *k;
    const char *p;

    for (k = gpursa_config_keys; k->name != NULL; k++) {
        printf("%s\t%s\tGPURSA_", k->name, k->dflt);
        for (p = k->name; *p != '\0'; p++)
            putchar(toupper((unsigned char)*p));
        printf("\t%s\n", k->meaning);
    }
    return 0;
}
