/* cell_scan.h — tokens of Lua source for the cell rules (cell.c): names,
 * strings and single other characters, with comments skipped. Not a full
 * Lua lexer: only what finding statements and top-level locals needs. */
#ifndef LMF_CELL_SCAN_H
#define LMF_CELL_SCAN_H

#include <stddef.h>

enum { LMF_TOK_NAME, LMF_TOK_STRING, LMF_TOK_OTHER };

typedef struct LmfToken {
    int kind;
    size_t start, len;   /* offsets into the scanned code */
    int line_start;      /* the first token of its line */
} LmfToken;

typedef struct LmfScan {
    const char *code, *p, *end;
    int newline;
} LmfScan;

void lmf_scan_init(LmfScan *s, const char *code, size_t len);

/* Reads the next token into 't'; returns 0 at the end of the code. */
int lmf_scan_next(LmfScan *s, LmfToken *t);

/* 1 when token 't' is exactly 'text'. */
int lmf_token_is(const LmfScan *s, const LmfToken *t, const char *text);

/* +1 for a keyword that opens a block ending in 'end' or 'until' (do, if,
 * function, repeat), -1 for end and until, 0 otherwise. */
int lmf_block_change(const LmfScan *s, const LmfToken *t);

#endif
