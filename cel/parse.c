/* cel/parse.c - the parser: CEL text into a syntax tree, macros expanded (the lexer is lex.c).
 *
 * A hand-written recursive descent over a precedence table for the binary operators (as Lua's
 * lparser does), with the nesting depth bounded so hostile input cannot exhaust the stack.
 * Long chains of && and || are built balanced, as cel-go does, so that evaluation recursion
 * stays shallow too. Errors carry line and column and are worded as cel-go's. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/lex.h"

/* Words CEL reserves: not identifiers. */
static const char *const reserved[] = {
    "as",  "break", "const",   "continue",  "else",   "for", "function", "if",   "import",
    "let", "loop",  "package", "namespace", "return", "var", "void",     "while"};

/* ---- nodes ------------------------------------------------------------------------------- */

static node *mk(parser *ps, node_kind k, uint32_t pos) {
  node *n = ts_arena_alloc(ps->arena, sizeof *n);
  if (!n) {
    if (!ps->failed) ts_err_set(ps->err, TS_ENOMEM, "out of memory");
    ps->failed = true;
    return NULL;
  }
  memset(n, 0, sizeof *n);
  n->kind = k;
  n->pos = pos;
  n->local = -1;
  n->var = -1;
  return n;
}

static node **args_copy(parser *ps, node **v, uint32_t n) {
  node **a = ts_arena_alloc(ps->arena, (n + 1) * sizeof *a);
  if (!a) {
    ps->failed = true;
    ts_err_set(ps->err, TS_ENOMEM, "out of memory");
    return NULL;
  }
  if (n) memcpy(a, v, n * sizeof *a);
  return a;
}

static node *call(parser *ps, const char *name, uint32_t pos, node *target, node **args,
                  uint32_t n) {
  node *c;
  if (ps->failed) return NULL; /* an argument failed to parse: no node with a hole in it */
  if (!(c = mk(ps, N_CALL, pos))) return NULL;
  c->name = ts_intern_cstr(name);
  c->target = target;
  c->args = args_copy(ps, args, n);
  c->nargs = n;
  return c;
}

static node *binary(parser *ps, const char *op, uint32_t pos, node *a, node *b) {
  node *args[2] = {a, b};
  if (ps->failed || !a || !b) return NULL;
  if (!strcmp(op, "&&") || !strcmp(op, "||")) {
    node *n = mk(ps, op[0] == '&' ? N_AND : N_OR, pos);
    if (!n) return NULL;
    n->args = args_copy(ps, args, 2);
    n->nargs = 2;
    return n;
  }
  {
    char name[8];
    if (!strcmp(op, "in")) return call(ps, "@in", pos, NULL, args, 2);
    snprintf(name, sizeof name, "_%s_", op);
    return call(ps, name, pos, NULL, args, 2);
  }
}

/* ---- grammar ------------------------------------------------------------------------------ */

static node *expr(parser *ps);

static bool enter(parser *ps) {
  if (++ps->depth > CEL_MAX_DEPTH) {
    cel__lex_fail(ps, ps->t.pos, "expression nests too deeply (more than %d levels)",
                  CEL_MAX_DEPTH);
    return false;
  }
  return true;
}

static void leave(parser *ps) {
  ps->depth--;
}

/* ExprList = Expr {"," Expr}; opt_flags for list literals' [?x] entries; first_opt when the
 * first entry's "?" came with the "[" (the lexer reads "[?" as one token). */
static uint32_t expr_list(parser *ps, const char *close, node **out, uint32_t cap,
                          uint8_t *opt_flags, bool first_opt) {
  uint32_t n = 0;
  if (cel__lex_is(ps, close) && !first_opt) return 0;
  for (;;) {
    bool optional = n == 0 && first_opt;
    if (opt_flags && !optional && cel__lex_is(ps, "?")) {
      optional = true;
      cel__lex_next(ps);
    }
    if (n == cap) {
      cel__lex_fail(ps, ps->t.pos, "too many elements (more than %u)", cap);
      return n;
    }
    if (opt_flags) opt_flags[n] = optional;
    out[n++] = expr(ps);
    if (ps->failed) return n;
    if (!cel__lex_is(ps, ",")) break;
    cel__lex_next(ps);
    if (cel__lex_is(ps, close)) break; /* trailing comma */
  }
  return n;
}

#define MAX_LITERAL 4096 /* elements of one list or map literal */

static node *list_lit(parser *ps, uint32_t pos, bool first_opt) {
  node **tmp = ts_malloc(MAX_LITERAL * sizeof *tmp);
  uint8_t *flags = ts_malloc(MAX_LITERAL);
  node *l = mk(ps, N_LIST, pos);
  uint32_t n = 0;
  bool any = false;
  if (tmp && flags && l) n = expr_list(ps, "]", tmp, MAX_LITERAL, flags, first_opt);
  if (!ps->failed && l) {
    l->args = args_copy(ps, tmp, n);
    l->nargs = n;
    for (uint32_t i = 0; i < n; i++) any |= flags[i];
    if (any && (l->optional = ts_arena_alloc(ps->arena, n))) memcpy(l->optional, flags, n);
    cel__lex_expect(ps, "]");
  }
  ts_free(tmp);
  ts_free(flags);
  return ps->failed ? NULL : l;
}

static node *map_lit(parser *ps, uint32_t pos) {
  node **tmp = ts_malloc(2 * MAX_LITERAL * sizeof *tmp);
  uint8_t *flags = ts_malloc(MAX_LITERAL);
  node *m = mk(ps, N_MAP, pos);
  uint32_t n = 0;
  bool any = false;
  if (!tmp || !flags || !m) goto out;
  while (!cel__lex_is(ps, "}") && !ps->failed) {
    bool optional = false;
    if (n == MAX_LITERAL) {
      cel__lex_fail(ps, ps->t.pos, "too many entries (more than %d)", MAX_LITERAL);
      break;
    }
    if (cel__lex_is(ps, "?")) optional = true, cel__lex_next(ps);
    flags[n] = optional;
    any |= optional;
    tmp[2 * n] = expr(ps);
    if (ps->failed || !cel__lex_expect(ps, ":")) break;
    tmp[2 * n + 1] = expr(ps);
    n++;
    if (!cel__lex_is(ps, ",")) break;
    cel__lex_next(ps);
  }
  if (!ps->failed) {
    m->args = args_copy(ps, tmp, 2 * n);
    m->nargs = 2 * n;
    if (any && (m->optional = ts_arena_alloc(ps->arena, n))) memcpy(m->optional, flags, n);
    cel__lex_expect(ps, "}");
  }
out:
  ts_free(tmp);
  ts_free(flags);
  return ps->failed ? NULL : m;
}

static node *literal(parser *ps) {
  node *n = mk(ps, N_LIT, ps->t.pos);
  if (!n) return NULL;
  switch (ps->t.kind) {
  case T_INT:
    if (ps->t.u > (uint64_t)INT64_MAX) cel__lex_fail(ps, ps->t.pos, "invalid int literal");
    n->lit = cel_int((int64_t)ps->t.u);
    break;
  case T_UINT:
    n->lit = cel_uint(ps->t.u);
    break;
  case T_DOUBLE:
    n->lit = cel_double(ps->t.d);
    break;
  case T_STRING:
    if (!cel__utf8_valid(ps->t.s, ps->t.sn))
      cel__lex_fail(ps, ps->t.pos, "invalid UTF-8 in string literal");
    n->lit = cel_string(ps->t.s, ps->t.sn);
    break;
  case T_BYTES:
    n->lit = cel_bytes(ps->t.s, ps->t.sn);
    break;
  default:
    break;
  }
  cel__lex_next(ps);
  return n;
}

/* Member tails: .name, .name(args), .?name, [e], [?e]. */
static node *member_tail(parser *ps, node *e);

/* Primary = ["."] IDENT ["(" args ")"] | "(" Expr ")" | list | map | literal */
static node *primary(parser *ps) {
  uint32_t pos = ps->t.pos;
  char got[64];
  if (ps->t.kind == T_INT || ps->t.kind == T_UINT || ps->t.kind == T_DOUBLE ||
      ps->t.kind == T_STRING || ps->t.kind == T_BYTES)
    return literal(ps);
  if (cel__lex_is(ps, "(")) {
    node *e;
    cel__lex_next(ps);
    e = expr(ps);
    cel__lex_expect(ps, ")");
    return e;
  }
  if (cel__lex_is(ps, "[") || cel__lex_is(ps, "[?")) { /* [?x, ...]: the first entry is optional */
    bool first_opt = cel__lex_is(ps, "[?");
    cel__lex_next(ps);
    return list_lit(ps, pos, first_opt);
  }
  if (cel__lex_is(ps, "{")) {
    cel__lex_next(ps);
    return map_lit(ps, pos);
  }
  if (cel__lex_is(ps, ".") || ps->t.kind == T_IDENT) {
    bool root = cel__lex_is(ps, ".");
    char name[256];
    if (root) {
      cel__lex_next(ps);
      if (ps->t.kind != T_IDENT) {
        cel__lex_tok_text(ps, got, sizeof got);
        cel__lex_fail(ps, ps->t.pos, "mismatched input '%s' expecting IDENTIFIER", got);
        return NULL;
      }
    }
    snprintf(name, sizeof name, "%s%.*s", root ? "." : "", (int)ps->t.n, ps->t.p);
    if (cel__lex_is_word(ps, "true") || cel__lex_is_word(ps, "false") ||
        cel__lex_is_word(ps, "null")) {
      node *n = mk(ps, N_LIT, pos);
      if (n)
        n->lit = cel__lex_is_word(ps, "null") ? cel_null() : cel_bool(cel__lex_is_word(ps, "true"));
      cel__lex_next(ps);
      return n;
    }
    for (size_t k = 0; k < sizeof reserved / sizeof *reserved; k++)
      if (cel__lex_is_word(ps, reserved[k])) {
        cel__lex_fail(ps, ps->t.pos, "reserved identifier: %s", reserved[k]);
        return NULL;
      }
    if (cel__lex_is_word(ps, "in")) {
      cel__lex_fail(ps, ps->t.pos, "mismatched input 'in' expecting an expression");
      return NULL;
    }
    cel__lex_next(ps);
    if (cel__lex_is(ps, "(")) {
      node *tmp[CEL_MAX_ARGS];
      uint32_t n;
      cel__lex_next(ps);
      n = expr_list(ps, ")", tmp, CEL_MAX_ARGS, NULL, false);
      if (!cel__lex_expect(ps, ")")) return NULL;
      return call(ps, root ? name + 1 : name, pos, NULL, tmp, n);
    }
    {
      node *id = mk(ps, N_IDENT, pos);
      if (id) id->name = ts_intern_cstr(name);
      return id;
    }
  }
  cel__lex_tok_text(ps, got, sizeof got);
  if (ps->t.kind != T_ERROR)
    cel__lex_fail(ps, ps->t.pos,
                  "mismatched input '%s' expecting {'[', '{', '(', '.', '-', '!', 'true', "
                  "'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}",
                  got);
  return NULL;
}

/* ---- macros ------------------------------------------------------------------------------ */

static bool simple_name(parser *ps, node *n, const char *what) {
  if (n && n->kind == N_IDENT && n->name[0] != '.' && !strchr(n->name, '.')) return true;
  cel__lex_fail(ps, n ? n->pos : ps->t.pos, "%s: argument must be a simple name", what);
  return false;
}

static node *comp(parser *ps, node *c, comp_kind k, node *range, const char *v1, const char *v2,
                  node *filter, node *body) {
  node *n = mk(ps, N_COMP, c->pos);
  if (!n) return NULL;
  n->ck = k;
  n->target = range;
  n->name = v1;
  n->v2 = v2;
  n->filter = filter;
  n->args = args_copy(ps, &body, 1);
  n->nargs = 1;
  return n;
}

/* Expands a macro call (c is a parsed call); returns c itself when it is not a macro. */
static node *macro(parser *ps, node *c) {
  const char *f = c->name;
  uint32_t n = c->nargs;
  node **a = c->args;
  if (ps->flags & CEL_NO_MACROS) return c;
  if (!c->target && !strcmp(f, "has") && n == 1) {
    if (a[0]->kind != N_SELECT || a[0]->opt) {
      cel__lex_fail(ps, a[0]->pos, "invalid argument to has() macro");
      return NULL;
    }
    a[0]->test_only = true;
    return a[0];
  }
  if (!c->target) return c;
  if (c->target->kind == N_IDENT && !strcmp(c->target->name, "cel") && !strcmp(f, "bind") &&
      n == 3) {
    node *b;
    if (!simple_name(ps, a[0], "cel.bind() macro") || !(b = mk(ps, N_BIND, c->pos))) return NULL;
    b->name = a[0]->name;
    b->args = args_copy(ps, a + 1, 2);
    b->nargs = 2;
    return b;
  }
  if ((!strcmp(f, "all") || !strcmp(f, "exists") || !strcmp(f, "exists_one") ||
       !strcmp(f, "existsOne")) &&
      (n == 2 || n == 3)) {
    comp_kind k = f[0] == 'a' ? C_ALL : !strcmp(f, "exists") ? C_EXISTS : C_EXISTS_ONE;
    if (!simple_name(ps, a[0], f) || (n == 3 && !simple_name(ps, a[1], f))) return NULL;
    return comp(ps, c, k, c->target, a[0]->name, n == 3 ? a[1]->name : NULL, NULL, a[n - 1]);
  }
  if (!strcmp(f, "map") && (n == 2 || n == 3)) {
    if (!simple_name(ps, a[0], "map")) return NULL;
    return comp(ps, c, C_MAP, c->target, a[0]->name, NULL, n == 3 ? a[1] : NULL, a[n - 1]);
  }
  if (!strcmp(f, "filter") && n == 2) {
    if (!simple_name(ps, a[0], "filter")) return NULL;
    return comp(ps, c, C_FILTER, c->target, a[0]->name, NULL, a[1], a[0]);
  }
  if ((!strcmp(f, "transformList") || !strcmp(f, "transformMap") ||
       !strcmp(f, "transformMapEntry")) &&
      (n == 3 || n == 4)) {
    comp_kind k = !strcmp(f, "transformList")  ? C_TRANSFORM_LIST
                  : !strcmp(f, "transformMap") ? C_TRANSFORM_MAP
                                               : C_TRANSFORM_ENTRY;
    if (!simple_name(ps, a[0], f) || !simple_name(ps, a[1], f)) return NULL;
    return comp(ps, c, k, c->target, a[0]->name, a[1]->name, n == 4 ? a[2] : NULL, a[n - 1]);
  }
  if ((!strcmp(f, "optMap") || !strcmp(f, "optFlatMap")) && n == 2) {
    node *m;
    if (!simple_name(ps, a[0], f) || !(m = mk(ps, N_OPTMAP, c->pos))) return NULL;
    m->target = c->target;
    m->name = a[0]->name;
    m->flat = f[3] == 'F';
    m->args = args_copy(ps, a + 1, 1);
    m->nargs = 1;
    return m;
  }
  return c;
}

static node *member_tail(parser *ps, node *e) {
  while (!ps->failed && e) {
    uint32_t pos = ps->t.pos;
    char got[64];
    if (cel__lex_is(ps, ".") || cel__lex_is(ps, ".?")) {
      bool opt = cel__lex_is(ps, ".?");
      char name[256];
      cel__lex_next(ps);
      if (ps->t.kind != T_IDENT) {
        cel__lex_tok_text(ps, got, sizeof got);
        cel__lex_fail(ps, ps->t.pos, "mismatched input '%s' expecting IDENTIFIER", got);
        return NULL;
      }
      snprintf(name, sizeof name, "%.*s", (int)ps->t.n, ps->t.p);
      cel__lex_next(ps);
      if (!opt && cel__lex_is(ps, "(")) {
        node *tmp[CEL_MAX_ARGS];
        uint32_t n;
        cel__lex_next(ps);
        n = expr_list(ps, ")", tmp, CEL_MAX_ARGS, NULL, false);
        if (!cel__lex_expect(ps, ")")) return NULL;
        e = call(ps, name, pos, e, tmp, n);
        if (e) e = macro(ps, e);
        continue;
      }
      {
        node *s = mk(ps, N_SELECT, pos);
        if (!s) return NULL;
        s->target = e;
        s->name = ts_intern_cstr(name);
        s->opt = opt;
        e = s;
      }
      continue;
    }
    if (cel__lex_is(ps, "[") || cel__lex_is(ps, "[?")) {
      node *x = mk(ps, N_INDEX, pos);
      bool opt = cel__lex_is(ps, "[?");
      node *k;
      cel__lex_next(ps);
      k = expr(ps);
      if (!x || ps->failed || !cel__lex_expect(ps, "]")) return NULL;
      x->target = e;
      x->args = args_copy(ps, &k, 1);
      x->nargs = 1;
      x->opt = opt;
      e = x;
      continue;
    }
    break;
  }
  return e;
}

/* Unary = Member | "!" {"!"} Member | "-" {"-"} Member */
static node *unary(parser *ps) {
  uint32_t pos = ps->t.pos;
  node *e;
  if (!enter(ps)) return NULL;
  if (cel__lex_is(ps, "!") || cel__lex_is(ps, "-")) {
    bool neg = cel__lex_is(ps, "-");
    cel__lex_next(ps);
    if (neg && (ps->t.kind == T_INT || ps->t.kind == T_DOUBLE) && ps->text[ps->t.pos - 1] == '-') {
      /* -literal: a negative literal (so that -9223372036854775808 is an int) */
      node *n = mk(ps, N_LIT, pos);
      if (n && ps->t.kind == T_INT) {
        if (ps->t.u > (uint64_t)INT64_MAX + 1) cel__lex_fail(ps, ps->t.pos, "invalid int literal");
        n->lit = cel_int((int64_t)(0 - ps->t.u));
      } else if (n) {
        n->lit = cel_double(-ps->t.d);
      }
      cel__lex_next(ps);
      e = member_tail(ps, n);
      leave(ps);
      return e;
    }
    e = unary(ps);
    if (e) e = call(ps, neg ? "-_" : "!_", pos, NULL, &e, 1);
    leave(ps);
    return e;
  }
  e = member_tail(ps, primary(ps));
  if (e && e->kind == N_CALL && !e->target) e = macro(ps, e);
  leave(ps);
  return e;
}

/* Binary operators by precedence (higher binds tighter). */
static int precedence(parser *ps, const char **op) {
  static const struct {
    const char *op;
    int prec;
  } ops[] = {{"||", 1}, {"&&", 2}, {"==", 3}, {"!=", 3}, {"<", 3}, {"<=", 3}, {">", 3},
             {">=", 3}, {"+", 4},  {"-", 4},  {"*", 5},  {"/", 5}, {"%", 5}};
  if (cel__lex_is_word(ps, "in")) {
    *op = "in";
    return 3;
  }
  if (ps->t.kind != T_PUNCT) return 0;
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
    if (cel__lex_is(ps, ops[i].op)) {
      *op = ops[i].op;
      return ops[i].prec;
    }
  return 0;
}

/* Builds a balanced tree of one logical operator from a flat list of operands. */
static node *balance(parser *ps, const char *op, node **v, uint32_t *pos, uint32_t lo,
                     uint32_t hi) {
  uint32_t mid;
  if (hi - lo == 1) return v[lo];
  mid = (lo + hi) / 2;
  return binary(ps, op, pos[mid], balance(ps, op, v, pos, lo, mid),
                balance(ps, op, v, pos, mid, hi));
}

#define MAX_CHAIN 4096 /* operands of one && / || chain */

static node *binop(parser *ps, int limit);

/* A chain of && or || at precedence prec, built balanced. */
static node *logical_chain(parser *ps, node *first, const char *op, int prec) {
  node **v = ts_malloc(MAX_CHAIN * sizeof *v);
  uint32_t *pos = ts_malloc(MAX_CHAIN * sizeof *pos);
  uint32_t n = 0;
  node *r = NULL;
  const char *o2;
  if (!v || !pos) {
    ts_free(v), ts_free(pos);
    cel__lex_fail(ps, ps->t.pos, "out of memory");
    return NULL;
  }
  v[n++] = first;
  while (!ps->failed && precedence(ps, &o2) == prec && n < MAX_CHAIN) {
    pos[n] = ps->t.pos;
    cel__lex_next(ps);
    v[n++] = binop(ps, prec + 1);
  }
  if (n == MAX_CHAIN) cel__lex_fail(ps, ps->t.pos, "too many operands of %s", op);
  if (!ps->failed) r = balance(ps, op, v, pos, 0, n);
  ts_free(v);
  ts_free(pos);
  return r;
}

/* Precedence climbing over the binary operators of precedence >= limit. */
static node *binop(parser *ps, int limit) {
  node *l;
  const char *op;
  int prec;
  if (!enter(ps)) return NULL;
  l = unary(ps);
  while (l && !ps->failed && (prec = precedence(ps, &op)) >= limit) {
    uint32_t pos = ps->t.pos;
    if (prec <= 2) {
      l = logical_chain(ps, l, op, prec);
      continue;
    }
    cel__lex_next(ps);
    l = binary(ps, op, pos, l, binop(ps, prec + 1));
  }
  leave(ps);
  return ps->failed ? NULL : l;
}

/* Expr = ConditionalOr ["?" ConditionalOr ":" Expr] */
static node *expr(parser *ps) {
  node *c, *n;
  uint32_t pos;
  if (!enter(ps)) return NULL;
  c = binop(ps, 1);
  if (!c || !cel__lex_is(ps, "?")) {
    leave(ps);
    return c;
  }
  pos = ps->t.pos;
  cel__lex_next(ps);
  n = mk(ps, N_COND, pos);
  if (n) {
    node *a[3];
    a[0] = c;
    a[1] = binop(ps, 1);
    if (cel__lex_expect(ps, ":")) a[2] = expr(ps);
    if (!ps->failed) {
      n->args = args_copy(ps, a, 3);
      n->nargs = 3;
    }
  }
  leave(ps);
  return ps->failed ? NULL : n;
}

ts_rc cel__parse(const char *text, size_t len, int flags, ts_arena *arena, node **out,
                 ts_err *err) {
  parser ps;
  node *root;
  char got[64];
  memset(&ps, 0, sizeof ps);
  ps.text = text, ps.len = len, ps.arena = arena, ps.err = err, ps.flags = flags;
  *out = NULL;
  cel__lex_next(&ps);
  root = expr(&ps);
  if (!ps.failed && ps.t.kind != T_EOF) {
    cel__lex_tok_text(&ps, got, sizeof got);
    cel__lex_fail(&ps, ps.t.pos, "mismatched input '%s' expecting <EOF>", got);
  }
  if (ps.failed || !root) {
    if (!ps.failed) cel__lex_fail(&ps, 0, "empty expression");
    return err && err->code ? err->code : TS_EPARSE;
  }
  *out = root;
  return TS_OK;
}
