/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hostile OSSL_PARAM arrays for the harnesses (see fuzz_params.h).
 */
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include "fuzz_params.h"

static const unsigned param_types[] = {
    OSSL_PARAM_INTEGER, OSSL_PARAM_UNSIGNED_INTEGER, OSSL_PARAM_UTF8_STRING,
    OSSL_PARAM_OCTET_STRING, OSSL_PARAM_UTF8_PTR, OSSL_PARAM_REAL
};

void fz_params_read(fz_params *fp, fz_input *in, const char *const *names, size_t nnames,
                    const char *const *dict, size_t ndict)
{
    size_t count = fz_u8(in) % (FZ_MAX_PARAMS + 1), i;

    memset(fp, 0, sizeof(*fp));
    for (i = 0; i < count && in->left > 0; i++) {
        OSSL_PARAM *p = &fp->params[fp->n];
        const char *name = names[fz_u8(in) % nnames];
        unsigned type = param_types[fz_u8(in) % (sizeof(param_types) / sizeof(param_types[0]))];
        size_t len = fz_u8(in), got;
        const uint8_t *val = fz_bytes(in, len, &got);
        unsigned char *block;

        if (type == OSSL_PARAM_UTF8_STRING || type == OSSL_PARAM_UTF8_PTR) {
            const char *word = NULL;

            if (got == 1 && val[0] < 0x80 && ndict > 0)
                word = dict[val[0] % ndict];
            if (word != NULL) {
                val = (const uint8_t *)word;
                got = strlen(word);
            }
            block = OPENSSL_malloc(got + 1);
            if (block == NULL)
                abort();
            memcpy(block, val, got);
            block[got] = '\0';
            if (type == OSSL_PARAM_UTF8_PTR) {
                /* the param holds a pointer to the string */
                char **ptr = OPENSSL_malloc(sizeof(char *));

                if (ptr == NULL)
                    abort();
                *ptr = (char *)block;
                fp->blocks[fp->n] = ptr;
                *p = OSSL_PARAM_construct_utf8_ptr(name, ptr, got);
                /* the string is freed through the pointer (fz_params_free) */
                fp->n++;
                continue;
            }
            *p = OSSL_PARAM_construct_utf8_string(name, (char *)block, got);
        } else {
            block = OPENSSL_malloc(got > 0 ? got : 1);
            if (block == NULL)
                abort();
            memcpy(block, val, got);
            *p = OSSL_PARAM_construct_octet_string(name, block, got);
            p->data_type = type;
        }
        fp->blocks[fp->n++] = block;
    }
    fp->params[fp->n] = OSSL_PARAM_construct_end();
}

void fz_params_free(fz_params *fp)
{
    size_t i;

    for (i = 0; i < fp->n; i++) {
        if (fp->params[i].data_type == OSSL_PARAM_UTF8_PTR)
            OPENSSL_free(*(char **)fp->blocks[i]);
        OPENSSL_free(fp->blocks[i]);
    }
    fp->n = 0;
}
