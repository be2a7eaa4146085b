/*
 * cel/lex.h - the CEL lexer, shared by the lexer (lex.c) and the parser (parse.c): tokens, the
 * parser's state (the lexer reads and advances it), errors at a position.
 */
#ifndef CEL_LEX_H
#define CEL_LEX_H

#include "cel/cel_int.h"

typedef enum tok_kind {
  T_EOF,
  T_INT,
  T_UINT,
  T_DOUBLE,
  T_STRING,
  T_BYTES,
  T_IDENT,
  T_PUNCT, /* operators and punctuation: text in tok.p/n */
  T_ERROR,
} tok_kind;

typedef struct tok {
  tok_kind kind; /* what */
  uint32_t pos;  /* byte offset */
  const char *p; /* text */
  uint32_t n;    /* length */
  int64_t i;     /* T_INT (magnitude may be INT64_MIN's when neg_ok) */
  uint64_t u;    /* T_UINT, and T_INT's magnitude */
  double d;      /* T_DOUBLE */
  char *s;       /* T_STRING / T_BYTES: decoded (arena) */
  bool quoted;   /* T_IDENT written in backquotes (a field name) */
  size_t sn;     /* its length */
} tok;

typedef struct parser {
  const char *text; /* the expression */
  size_t len;       /* its length */
  size_t at;        /* lexer position */
  tok t;            /* current token */
  ts_arena *arena;  /* where nodes go */
  ts_err *err;      /* first error */
  bool failed;      /* an error was reported */
  int depth;        /* recursion depth */
  int flags;        /* CEL_NO_MACROS ... */
} parser;

/* Records the first error, at byte pos of the text, in cel-go's words; later ones are dropped. */
void cel__lex_fail(parser *ps, uint32_t pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Reads the next token into ps->t (T_ERROR after an error). */
void cel__lex_next(parser *ps);
/* True when the current token is the punctuation p, or the identifier w. */
bool cel__lex_is(const parser *ps, const char *p);
bool cel__lex_is_word(const parser *ps, const char *w);
/* The current token's text for a message, cut to cap. */
void cel__lex_tok_text(const parser *ps, char *out, size_t cap);
/* Takes the punctuation p, or fails saying what was found instead; false then. */
bool cel__lex_expect(parser *ps, const char *p);

#endif
