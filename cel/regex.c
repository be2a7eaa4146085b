/* cel/regex.c - RE2-syntax regular expressions, matched by a Pike VM in time linear in the
 * input (Russ Cox, "Regular Expression Matching: the Virtual Machine Approach").
 *
 * The parser turns the pattern into a small program (character ranges, splits with priority,
 * assertions); the VM runs every thread in lock step over the input, in priority order, which
 * gives Go's leftmost-first match without backtracking. Bounds: pattern length, nesting depth,
 * repetition counts (1000, as RE2) and program size; the search counts steps against a budget
 * and never allocates (its thread lists live in caller-provided scratch). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel_int.h"

#define RE_MAX_PATTERN 16384 /* bytes */
#define RE_MAX_PROG    20000 /* instructions */
#define RE_MAX_DEPTH   1000  /* nesting of groups */
#define RE_MAX_REPEAT  1000  /* {n,m} */
#define RE_MAX_RANGES  4096  /* ranges of one class */

typedef enum op {
  OP_RANGES, /* one code point within ranges[r0 .. r0+nr) */
  OP_ANY,    /* any code point (nl: also newline) */
  OP_SPLIT,  /* try x first, then y */
  OP_JMP,    /* go to x */
  OP_ASSERT, /* zero-width: x is the assertion */
  OP_MATCH,
} op;

enum { AS_BOL, AS_EOL, AS_BOT, AS_EOT, AS_WORD, AS_NOWORD };

typedef struct inst {
  uint8_t op;    /* op */
  uint8_t nl;    /* OP_ANY: matches newline too */
  uint32_t x, y; /* targets, assertion kind, or first range */
  uint32_t nr;   /* OP_RANGES: number of ranges */
} inst;

typedef struct range {
  uint32_t lo, hi; /* inclusive code points */
} range;

struct cel_re {
  inst *prog;    /* instructions */
  uint32_t n;    /* entries */
  range *ranges; /* all ranges */
  uint32_t nr;   /* entries */
};

/* ---- parser: pattern -> fragments of code ------------------------------------------------------
 */

typedef struct rparser {
  const char *s;                         /* pattern */
  size_t n, i;                           /* length, position */
  bool fold, dotnl, multiline, ungreedy; /* flags in effect */
  int depth;                             /* nesting */
  inst *prog;                            /* code being built */
  uint32_t np, cap;                      /* entries, capacity */
  range *rg;                             /* ranges */
  uint32_t nrg, rcap;                    /* entries, capacity */
  ts_err *err;                           /* error */
  bool failed;                           /* an error was set */
} rparser;

static void rfail(rparser *p, const char *what, size_t from, size_t to) {
  if (p->failed) return;
  p->failed = true;
  if (to > p->n) to = p->n;
  ts_err_set(p->err, TS_EPARSE, "error parsing regexp: %s: `%.*s`", what, (int)(to - from),
             p->s + from);
}

static uint32_t emit(rparser *p, inst in) {
  if (p->np == p->cap) {
    uint32_t nc = p->cap ? p->cap * 2 : 64;
    inst *np;
    if (nc > RE_MAX_PROG + 64 || !(np = ts_realloc(p->prog, nc * sizeof *np))) {
      if (!p->failed) {
        p->failed = true;
        ts_err_set(p->err, TS_ELIMIT, "error parsing regexp: expression too large");
      }
      return 0;
    }
    p->prog = np, p->cap = nc;
  }
  if (p->np >= RE_MAX_PROG) {
    if (!p->failed) {
      p->failed = true;
      ts_err_set(p->err, TS_ELIMIT, "error parsing regexp: expression too large");
    }
    return 0;
  }
  p->prog[p->np] = in;
  return p->np++;
}

/* A fragment is code [start, end) with its entry at start; the next instruction follows it. */
typedef struct frag {
  uint32_t start, end;
} frag;

static bool add_range(rparser *p, uint32_t lo, uint32_t hi) {
  if (p->nrg == p->rcap) {
    uint32_t nc = p->rcap ? p->rcap * 2 : 64;
    range *nr;
    if (nc > RE_MAX_RANGES * 64 || !(nr = ts_realloc(p->rg, nc * sizeof *nr))) {
      rfail(p, "expression too large", 0, 0);
      return false;
    }
    p->rg = nr, p->rcap = nc;
  }
  p->rg[p->nrg++] = (range){lo, hi};
  return true;
}

/* Simple case folding: the other case of c, or c. */
static uint32_t other_case(uint32_t c) {
  if (c >= 'a' && c <= 'z') return c - 32;
  if (c >= 'A' && c <= 'Z') return c + 32;
  if (c >= 0xE0 && c <= 0xFE && c != 0xF7) return c - 32;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;
  if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) return c - 32;
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
  if (c >= 0x430 && c <= 0x44F) return c - 32;
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  if (c >= 0x450 && c <= 0x45F) return c - 80;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  return c;
}

static int range_cmp(const void *a, const void *b) {
  const range *x = a, *y = b;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sorts, folds (when asked), merges and optionally negates the ranges from `from` on. */
static void finish_class(rparser *p, uint32_t from, bool negate, bool fold) {
  uint32_t n = p->nrg - from, k = 0;
  range *r;
  if (fold) {
    for (uint32_t i = 0; i < n; i++) {
      range x = p->rg[from + i];
      uint32_t hi = x.hi - x.lo > 2000 ? x.lo + 2000 : x.hi;
      for (uint32_t c = x.lo; c <= hi && !p->failed; c++) {
        uint32_t o = other_case(c);
        if (o != c && !add_range(p, o, o)) return;
      }
    }
    n = p->nrg - from;
  }
  r = p->rg + from;
  qsort(r, n, sizeof *r, range_cmp);
  for (uint32_t i = 0; i < n; i++) {
    if (k && r[i].lo <= r[k - 1].hi + 1) {
      if (r[i].hi > r[k - 1].hi) r[k - 1].hi = r[i].hi;
    } else {
      r[k++] = r[i];
    }
  }
  p->nrg = from + k;
  if (negate) {
    range *copy = ts_malloc((k + 1) * sizeof *copy);
    uint32_t next = 0;
    if (!copy) {
      rfail(p, "out of memory", 0, 0);
      return;
    }
    memcpy(copy, r, k * sizeof *copy);
    p->nrg = from;
    for (uint32_t i = 0; i < k; i++) {
      if (copy[i].lo > next) add_range(p, next, copy[i].lo - 1);
      next = copy[i].hi + 1;
    }
    if (next <= 0x10FFFF) add_range(p, next, 0x10FFFF);
    ts_free(copy);
  }
}

static frag class_frag(rparser *p, uint32_t from) {
  uint32_t at = emit(p, (inst){OP_RANGES, 0, from, 0, p->nrg - from});
  return (frag){at, at + 1};
}

/* Decodes one UTF-8 code point of the pattern at p->i. */
static uint32_t pat_rune(rparser *p) {
  const unsigned char *s = (const unsigned char *)p->s + p->i;
  size_t left = p->n - p->i, k;
  uint32_t c = s[0];
  if (c < 0x80) {
    p->i++;
    return c;
  }
  k = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
  if (k > left) {
    p->i++;
    return 0xFFFD;
  }
  c &= k == 2 ? 0x1F : k == 3 ? 0x0F : 0x07;
  for (size_t j = 1; j < k; j++) c = c << 6 | (s[j] & 0x3F);
  p->i += k;
  return c;
}

static int hexv(char c) {
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

/* Perl classes \d \w \s and their negations, into ranges. */
static bool perl_class(rparser *p, char c, bool *negate) {
  *negate = c == 'D' || c == 'W' || c == 'S';
  switch (c | 0x20) {
  case 'd':
    return add_range(p, '0', '9');
  case 'w':
    return add_range(p, '0', '9') && add_range(p, 'A', 'Z') && add_range(p, '_', '_') &&
           add_range(p, 'a', 'z');
  case 's':
    return add_range(p, '\t', '\n') && add_range(p, '\f', '\r') && add_range(p, ' ', ' ');
  }
  return false;
}

static const struct {
  const char *name;
  const char *ranges; /* pairs lo,hi */
} posix[] = {{"alnum", "09AZaz"},
             {"alpha", "AZaz"},
             {"ascii", "\x01\x7F"},
             {"blank", "\t\t  "},
             {"cntrl", "\x01\x1F\x7F\x7F"},
             {"digit", "09"},
             {"graph", "!~"},
             {"lower", "az"},
             {"print", " ~"},
             {"punct", "!/:@[`{~"},
             {"space", "\t\r  "},
             {"upper", "AZ"},
             {"word", "09AZ__az"},
             {"xdigit", "09AFaf"}};

/* An escape after the backslash at p->i. For a class member (in_class), *single receives the
 * code point of a literal escape; otherwise ranges are appended. Returns 1 literal, 2 ranges
 * added (negated when *neg), 3 an assertion (*assert), 0 error. */
static int escape(rparser *p, bool in_class, uint32_t *single, bool *neg, int *assert) {
  size_t at = p->i - 1;
  char c;
  if (p->i >= p->n) {
    rfail(p, "trailing backslash at end of expression", at, p->n);
    return 0;
  }
  c = p->s[p->i];
  if (strchr("dDwWsS", c) && c) {
    p->i++;
    return perl_class(p, c, neg) ? 2 : 0;
  }
  if (!in_class && strchr("AzbB", c) && c) {
    p->i++;
    *assert = c == 'A' ? AS_BOT : c == 'z' ? AS_EOT : c == 'b' ? AS_WORD : AS_NOWORD;
    return 3;
  }
  if (c == 'x') {
    uint32_t v = 0;
    p->i++;
    if (p->i < p->n && p->s[p->i] == '{') {
      size_t j = ++p->i;
      while (p->i < p->n && hexv(p->s[p->i]) >= 0 && v <= 0x10FFFF)
        v = v * 16 + (uint32_t)hexv(p->s[p->i++]);
      if (p->i >= p->n || p->s[p->i] != '}' || p->i == j || v > 0x10FFFF) {
        rfail(p, "invalid escape sequence", at, p->i + 1);
        return 0;
      }
      p->i++;
    } else {
      if (p->i + 2 > p->n || hexv(p->s[p->i]) < 0 || hexv(p->s[p->i + 1]) < 0) {
        rfail(p, "invalid escape sequence", at, p->i + 2);
        return 0;
      }
      v = (uint32_t)(hexv(p->s[p->i]) * 16 + hexv(p->s[p->i + 1]));
      p->i += 2;
    }
    *single = v;
    return 1;
  }
  if (c >= '0' && c <= '7') { /* octal: \0, \0oo; \1-\7 alone would be backreferences */
    uint32_t v = 0;
    int k = 0;
    if (c != '0' && (p->i + 1 >= p->n || p->s[p->i + 1] < '0' || p->s[p->i + 1] > '7')) {
      rfail(p, "invalid escape sequence", at, p->i + 1);
      return 0;
    }
    while (k < 3 && p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '7')
      v = v * 8 + (uint32_t)(p->s[p->i++] - '0'), k++;
    *single = v;
    return 1;
  }
  {
    static const char from[] = "afnrtv", to[] = "\a\f\n\r\t\v";
    const char *k = strchr(from, c);
    if (k && c) {
      p->i++;
      *single = (uint32_t)(unsigned char)to[k - from];
      return 1;
    }
  }
  if ((c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
      (c >= 0x7B && c <= 0x7E)) { /* escaped punctuation */
    p->i++;
    *single = (uint32_t)c;
    return 1;
  }
  if (c == 'p' || c == 'P') {
    rfail(p, "invalid character class range (Unicode classes are not supported)", at, p->i + 1);
    return 0;
  }
  p->i++;
  rfail(p, "invalid escape sequence", at, p->i);
  return 0;
}

/* [...] after the opening bracket. */
static frag parse_class(rparser *p) {
  size_t start = p->i - 1;
  uint32_t from = p->nrg;
  bool negate = false, first = true;
  frag none = {0, 0};
  if (p->i < p->n && p->s[p->i] == '^') negate = true, p->i++;
  while (!p->failed) {
    uint32_t lo, hi;
    if (p->i >= p->n) {
      rfail(p, "missing closing ]", start, p->n);
      return none;
    }
    if (p->s[p->i] == ']' && !first) {
      p->i++;
      break;
    }
    first = false;
    if (p->s[p->i] == '[' && p->i + 1 < p->n && p->s[p->i + 1] == ':') {
      size_t e = p->i + 2;
      bool pneg = false, found = false;
      while (e + 1 < p->n && !(p->s[e] == ':' && p->s[e + 1] == ']')) e++;
      if (e + 1 < p->n) {
        size_t b = p->i + 2;
        if (p->s[b] == '^') pneg = true, b++;
        for (size_t k = 0; k < sizeof posix / sizeof *posix; k++) {
          if (strlen(posix[k].name) != e - b || memcmp(posix[k].name, p->s + b, e - b)) continue;
          uint32_t cls = p->nrg;
          for (const char *r = posix[k].ranges; *r; r += 2)
            add_range(p, (unsigned char)r[0], (unsigned char)r[1]);
          if (pneg) finish_class(p, cls, true, false);
          found = true;
        }
        if (!found) {
          rfail(p, "invalid character class range", p->i, e + 2);
          return none;
        }
        p->i = e + 2;
        continue;
      }
    }
    if (p->s[p->i] == '\\') {
      bool pneg;
      int assert;
      int r;
      uint32_t mark = p->nrg;
      p->i++;
      r = escape(p, true, &lo, &pneg, &assert);
      if (!r) return none;
      if (r == 2) {
        if (pneg) finish_class(p, mark, true, false); /* \D inside a class */
        continue;
      }
    } else {
      lo = pat_rune(p);
    }
    hi = lo;
    if (p->i + 1 < p->n && p->s[p->i] == '-' && p->s[p->i + 1] != ']') {
      size_t dash = p->i;
      bool pneg;
      int assert;
      p->i++;
      if (p->s[p->i] == '\\') {
        p->i++;
        if (escape(p, true, &hi, &pneg, &assert) != 1) {
          rfail(p, "invalid character class range", dash - 1, p->i);
          return none;
        }
      } else {
        hi = pat_rune(p);
      }
      if (hi < lo) {
        rfail(p, "invalid character class range", dash - 1, p->i);
        return none;
      }
    }
    if (!add_range(p, lo, hi)) return none;
  }
  finish_class(p, from, negate, p->fold);
  return class_frag(p, from);
}

static frag parse_alt(rparser *p);

/* Moves the code of f one place later, freeing f.start (for a SPLIT in front of it). */
static void shift(rparser *p, frag *f) {
  if (emit(p, (inst){OP_MATCH, 0, 0, 0, 0}), p->failed) return;
  memmove(p->prog + f->start + 1, p->prog + f->start, (p->np - 1 - f->start) * sizeof *p->prog);
  for (uint32_t i = f->start + 1; i < p->np; i++) {
    inst *in = &p->prog[i];
    if (in->op == OP_SPLIT || in->op == OP_JMP) {
      if (in->x >= f->start) in->x++;
      if (in->op == OP_SPLIT && in->y >= f->start) in->y++;
    }
  }
  f->end++;
}

/* e* (or e*? when lazy): L: split body, out; body; jmp L */
static frag star(rparser *p, frag f, bool lazy) {
  uint32_t s = f.start;
  shift(p, &f);
  if (p->failed) return f;
  emit(p, (inst){OP_JMP, 0, s, 0, 0});
  p->prog[s] = lazy ? (inst){OP_SPLIT, 0, p->np, s + 1, 0} : (inst){OP_SPLIT, 0, s + 1, p->np, 0};
  return (frag){s, p->np};
}

/* e+ : body; split body, out */
static frag plus(rparser *p, frag f, bool lazy) {
  uint32_t at = emit(p, (inst){OP_SPLIT, 0, 0, 0, 0});
  if (p->failed) return f;
  p->prog[at] =
      lazy ? (inst){OP_SPLIT, 0, at + 1, f.start, 0} : (inst){OP_SPLIT, 0, f.start, at + 1, 0};
  return (frag){f.start, p->np};
}

/* e? : split body, out; body */
static frag quest(rparser *p, frag f, bool lazy) {
  uint32_t s = f.start;
  shift(p, &f);
  if (p->failed) return f;
  p->prog[s] = lazy ? (inst){OP_SPLIT, 0, p->np, s + 1, 0} : (inst){OP_SPLIT, 0, s + 1, p->np, 0};
  return (frag){s, p->np};
}

/* Appends a copy of code[0..len) (targets relative to old_base) at the end. */
static frag emit_copy(rparser *p, const inst *code, uint32_t len, uint32_t old_base) {
  uint32_t base = p->np;
  for (uint32_t i = 0; i < len && !p->failed; i++) {
    inst in = code[i];
    if (in.op == OP_SPLIT || in.op == OP_JMP) {
      in.x = in.x - old_base + base;
      if (in.op == OP_SPLIT) in.y = in.y - old_base + base;
    }
    emit(p, in);
  }
  return (frag){base, p->np};
}

/* e{min,max} (max < 0: unbounded): min copies, then optional copies or a loop. */
static frag repeat(rparser *p, frag f, int min, int max, bool lazy) {
  uint32_t len = f.end - f.start;
  inst *saved = ts_malloc((len + 1) * sizeof *saved);
  frag g;
  if (!saved) {
    rfail(p, "out of memory", 0, 0);
    return f;
  }
  if (len) memcpy(saved, p->prog + f.start, len * sizeof *saved); /* () has nothing yet */
  p->np = f.start;
  for (int i = 0; i < min && !p->failed; i++) g = emit_copy(p, saved, len, f.start);
  if (max < 0) {
    if (min == 0)
      star(p, emit_copy(p, saved, len, f.start), lazy);
    else
      plus(p, g, lazy);
  } else {
    for (int i = min; i < max && !p->failed; i++) quest(p, emit_copy(p, saved, len, f.start), lazy);
  }
  ts_free(saved);
  return (frag){f.start, p->np};
}

static bool parse_count(rparser *p, int *out) {
  int v = 0;
  size_t b = p->i;
  while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') {
    v = v * 10 + (p->s[p->i++] - '0');
    if (v > 100000) v = 100000;
  }
  *out = v;
  return p->i > b;
}

/* {n}, {n,}, {n,m} at p->i (after the brace); false (and p->i unchanged) when it is not one. */
static bool parse_braces(rparser *p, int *min, int *max) {
  size_t save = p->i;
  if (!parse_count(p, min)) goto literal;
  *max = *min;
  if (p->i < p->n && p->s[p->i] == ',') {
    p->i++;
    if (!parse_count(p, max)) *max = -1;
  }
  if (p->i >= p->n || p->s[p->i] != '}') goto literal;
  p->i++;
  return true;
literal:
  p->i = save;
  return false;
}

static frag parse_atom(rparser *p);

/* Flags (?i) (?-s) (?i:...) after "(?"; returns true when it was a group with a body in *f. */
static bool parse_flags(rparser *p, size_t open, frag *f, bool *is_group) {
  bool neg = false, *flag;
  bool saved[4] = {p->fold, p->dotnl, p->multiline, p->ungreedy};
  *is_group = false;
  while (p->i < p->n) {
    char c = p->s[p->i++];
    switch (c) {
    case 'i':
      flag = &p->fold;
      break;
    case 's':
      flag = &p->dotnl;
      break;
    case 'm':
      flag = &p->multiline;
      break;
    case 'U':
      flag = &p->ungreedy;
      break;
    case '-':
      if (neg) goto bad;
      neg = true;
      continue;
    case ')':
      *f = (frag){p->np, p->np};
      return true;
    case ':':
      *is_group = true;
      *f = parse_alt(p);
      if (p->failed) return false;
      if (p->i >= p->n || p->s[p->i] != ')') {
        rfail(p, "missing closing )", open, p->n);
        return false;
      }
      p->i++;
      p->fold = saved[0], p->dotnl = saved[1], p->multiline = saved[2], p->ungreedy = saved[3];
      return true;
    default:
      goto bad;
    }
    *flag = !neg;
  }
bad:
  rfail(p, "invalid or unsupported Perl syntax", open, p->i);
  return false;
}

static frag parse_group(rparser *p) {
  size_t open = p->i - 1;
  frag f;
  if (++p->depth > RE_MAX_DEPTH) {
    rfail(p, "expression nests too deeply", open, p->i);
    return (frag){0, 0};
  }
  if (p->i < p->n && p->s[p->i] == '?') {
    bool group;
    p->i++;
    if (p->i < p->n && (p->s[p->i] == 'P' || p->s[p->i] == '<')) { /* named group */
      size_t e;
      if (p->s[p->i] == 'P') p->i++;
      if (p->i >= p->n || p->s[p->i] != '<') {
        rfail(p, "invalid or unsupported Perl syntax", open, p->i + 1);
        return (frag){0, 0};
      }
      e = p->i + 1;
      while (e < p->n && p->s[e] != '>') e++;
      if (e >= p->n || e == p->i + 1) {
        rfail(p, "invalid named capture", open, e + 1);
        return (frag){0, 0};
      }
      p->i = e + 1;
    } else {
      if (p->i < p->n &&
          (p->s[p->i] == '=' || p->s[p->i] == '!' || p->s[p->i] == '<' || p->s[p->i] == '>')) {
        rfail(p, "invalid or unsupported Perl syntax", open, p->i + 1);
        return (frag){0, 0};
      }
      parse_flags(p, open, &f, &group);
      p->depth--;
      return f;
    }
  }
  f = parse_alt(p);
  if (!p->failed && (p->i >= p->n || p->s[p->i] != ')')) rfail(p, "missing closing )", open, p->n);
  p->i++;
  p->depth--;
  return f;
}

static frag literal(rparser *p, uint32_t c) {
  uint32_t from = p->nrg;
  add_range(p, c, c);
  finish_class(p, from, false, p->fold);
  return class_frag(p, from);
}

static frag parse_atom(rparser *p) {
  char c = p->s[p->i];
  frag none = {p->np, p->np};
  switch (c) {
  case '(':
    p->i++;
    return parse_group(p);
  case '[':
    p->i++;
    return parse_class(p);
  case '.': {
    uint32_t at;
    p->i++;
    at = emit(p, (inst){OP_ANY, p->dotnl, 0, 0, 0});
    return (frag){at, at + 1};
  }
  case '^':
  case '$': {
    uint32_t at;
    int a = c == '^' ? (p->multiline ? AS_BOL : AS_BOT) : (p->multiline ? AS_EOL : AS_EOT);
    p->i++;
    at = emit(p, (inst){OP_ASSERT, 0, (uint32_t)a, 0, 0});
    return (frag){at, at + 1};
  }
  case '\\': {
    uint32_t single = 0, from = p->nrg;
    bool neg = false;
    int assert = 0, r;
    if (p->i + 1 < p->n && p->s[p->i + 1] == 'Q') { /* \Q...\E: literal text */
      size_t e;
      frag f = none;
      bool any = false;
      p->i += 2;
      e = p->i;
      while (e < p->n && !(p->s[e] == '\\' && e + 1 < p->n && p->s[e + 1] == 'E')) e++;
      while (p->i < e && !p->failed) {
        frag g = literal(p, pat_rune(p));
        if (!any) f.start = g.start;
        any = true;
        f.end = g.end;
      }
      p->i = e < p->n ? e + 2 : e;
      return any ? f : none;
    }
    p->i++;
    r = escape(p, false, &single, &neg, &assert);
    if (r == 1) return literal(p, single);
    if (r == 2) {
      finish_class(p, from, neg, false);
      return class_frag(p, from);
    }
    if (r == 3) {
      uint32_t at = emit(p, (inst){OP_ASSERT, 0, (uint32_t)assert, 0, 0});
      return (frag){at, at + 1};
    }
    return none;
  }
  case '*':
  case '+':
  case '?':
    rfail(p, "missing argument to repetition operator", p->i, p->i + 1);
    return none;
  default:
    return literal(p, pat_rune(p));
  }
}

/* concatenation of atoms with their repetitions */
static frag parse_concat(rparser *p) {
  frag whole = {p->np, p->np};
  while (!p->failed && p->i < p->n && p->s[p->i] != '|' && p->s[p->i] != ')') {
    size_t atom_at = p->i;
    frag f = parse_atom(p);
    bool repeated = false;
    while (!p->failed && p->i < p->n) {
      char c = p->s[p->i];
      int min = 0, max = 0;
      bool lazy;
      size_t op_at = p->i;
      if (c == '*' || c == '+' || c == '?') {
        p->i++;
      } else if (c == '{') {
        p->i++;
        if (!parse_braces(p, &min, &max)) {
          p->i--;
          break;
        }
        if (min > RE_MAX_REPEAT || max > RE_MAX_REPEAT || (max >= 0 && max < min)) {
          rfail(p, "invalid repeat count", op_at, p->i);
          return whole;
        }
      } else {
        break;
      }
      if (repeated) {
        rfail(p, "invalid nested repetition operator", op_at - 1, p->i);
        return whole;
      }
      lazy = p->i < p->n && p->s[p->i] == '?';
      if (lazy) p->i++;
      if (p->ungreedy) lazy = !lazy;
      if (f.start == f.end && c != '{') { /* repeating an empty match (^*) */
        repeated = true;
        continue;
      }
      if (c == '*')
        f = star(p, f, lazy);
      else if (c == '+')
        f = plus(p, f, lazy);
      else if (c == '?')
        f = quest(p, f, lazy);
      else
        f = repeat(p, f, min, max, lazy);
      repeated = true;
      (void)atom_at;
    }
    whole.end = p->np;
  }
  return whole;
}

/* alternation: split a, L1; a; jmp out; L1: split b, L2; ... */
static frag parse_alt(rparser *p) {
  frag f = parse_concat(p);
  while (!p->failed && p->i < p->n && p->s[p->i] == '|') {
    uint32_t jmp;
    frag g;
    p->i++;
    shift(p, &f);
    if (p->failed) break;
    jmp = emit(p, (inst){OP_JMP, 0, 0, 0, 0});
    p->prog[f.start] = (inst){OP_SPLIT, 0, f.start + 1, p->np, 0};
    g = parse_concat(p);
    p->prog[jmp].x = p->np;
    f.end = p->np;
    (void)g;
  }
  return f;
}

ts_rc cel_re_compile(const char *pat, size_t len, cel_re **out, ts_err *err) {
  rparser p;
  cel_re *re;
  *out = NULL;
  if (len > RE_MAX_PATTERN)
    return ts_err_set(err, TS_ELIMIT, "error parsing regexp: expression too large");
  memset(&p, 0, sizeof p);
  p.s = pat, p.n = len, p.err = err;
  parse_alt(&p);
  if (!p.failed && p.i < p.n) rfail(&p, "unexpected )", 0, p.n);
  if (!p.failed) emit(&p, (inst){OP_MATCH, 0, 0, 0, 0});
  if (p.failed || !(re = ts_calloc(1, sizeof *re))) {
    ts_rc rc =
        p.failed ? (err ? err->code : TS_EPARSE) : ts_err_set(err, TS_ENOMEM, "out of memory");
    ts_free(p.prog);
    ts_free(p.rg);
    return rc;
  }
  re->prog = p.prog, re->n = p.np, re->ranges = p.rg, re->nr = p.nrg;
  *out = re;
  return TS_OK;
}

void cel_re_free(cel_re *re) {
  if (!re) return;
  ts_free(re->prog);
  ts_free(re->ranges);
  ts_free(re);
}

/* ---- the VM -------------------------------------------------------------------------------------
 */

typedef struct thread {
  uint32_t pc;  /* instruction */
  size_t start; /* where its match began */
} thread;

typedef struct tlist {
  thread *t;      /* threads in priority order */
  uint32_t n;     /* entries */
  uint32_t *mark; /* pc -> generation when added */
} tlist;

size_t cel_re_scratch_size(const cel_re *re) {
  return 2 * (re->n * sizeof(thread) + re->n * sizeof(uint32_t)) + 64;
}

static bool is_word(int c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool assertion(uint32_t kind, const char *s, size_t len, size_t at) {
  int before = at ? (unsigned char)s[at - 1] : -1, after = at < len ? (unsigned char)s[at] : -1;
  switch (kind) {
  case AS_BOT:
    return at == 0;
  case AS_EOT:
    return at == len;
  case AS_BOL:
    return at == 0 || before == '\n';
  case AS_EOL:
    return at == len || after == '\n';
  case AS_WORD:
    return is_word(before) != is_word(after);
  case AS_NOWORD:
    return is_word(before) == is_word(after);
  }
  return false;
}

/* Adds the thread (following jumps, splits and assertions) in priority order. Iterative with
 * an explicit stack in the list's spare space would be faster; recursion depth is bounded by
 * the program size. */
static void add(const cel_re *re, tlist *l, uint32_t pc, size_t start, uint32_t gen, const char *s,
                size_t len, size_t at, uint64_t *steps) {
  if (l->mark[pc] == gen) return;
  l->mark[pc] = gen;
  (*steps)++;
  switch (re->prog[pc].op) {
  case OP_JMP:
    add(re, l, re->prog[pc].x, start, gen, s, len, at, steps);
    return;
  case OP_SPLIT:
    add(re, l, re->prog[pc].x, start, gen, s, len, at, steps);
    add(re, l, re->prog[pc].y, start, gen, s, len, at, steps);
    return;
  case OP_ASSERT:
    if (assertion(re->prog[pc].x, s, len, at)) add(re, l, pc + 1, start, gen, s, len, at, steps);
    return;
  default:
    l->t[l->n++] = (thread){pc, start};
  }
}

/* Decodes the code point at s[at]; invalid bytes are U+FFFD of width 1, as in Go. */
static uint32_t rune_at(const char *s, size_t len, size_t at, size_t *w) {
  const unsigned char *p = (const unsigned char *)s + at;
  uint32_t c = p[0];
  size_t k;
  if (c < 0x80) {
    *w = 1;
    return c;
  }
  k = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
  if (!k || !cel__utf8_valid(s + at, k <= len - at ? k : len - at) || k > len - at) {
    *w = 1;
    return 0xFFFD;
  }
  c &= k == 2 ? 0x1F : k == 3 ? 0x0F : 0x07;
  for (size_t j = 1; j < k; j++) c = c << 6 | (p[j] & 0x3F);
  *w = k;
  return c;
}

static bool in_ranges(const cel_re *re, const inst *in, uint32_t c) {
  const range *r = re->ranges + in->x;
  uint32_t lo = 0, hi = in->nr;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (c < r[mid].lo)
      hi = mid;
    else if (c > r[mid].hi)
      lo = mid + 1;
    else
      return true;
  }
  return false;
}

ts_rc cel_re_search(const cel_re *re, const char *s, size_t len, void *scratch, uint64_t *budget,
                    bool *found, size_t *start, size_t *end) {
  tlist a, b, *cl = &a, *nl = &b;
  char *mem = scratch;
  uint32_t gen = 1;
  uint64_t steps = 0;
  bool matched = false;
  a.t = (thread *)mem;
  b.t = a.t + re->n;
  a.mark = (uint32_t *)(b.t + re->n);
  b.mark = a.mark + re->n;
  memset(a.mark, 0, 2 * re->n * sizeof *a.mark);
  a.n = b.n = 0;
  *found = false;
  for (size_t at = 0;; gen++) {
    size_t w = 1;
    uint32_t c = 0;
    if (!matched) add(re, cl, 0, at, gen, s, len, at, &steps); /* a new attempt, lowest priority */
    if (!cl->n) break;
    if (at < len) c = rune_at(s, len, at, &w);
    nl->n = 0;
    for (uint32_t i = 0; i < cl->n; i++) {
      const inst *in = &re->prog[cl->t[i].pc];
      steps++;
      switch (in->op) {
      case OP_MATCH:
        matched = true;
        *start = cl->t[i].start, *end = at;
        i = cl->n; /* lower-priority threads lose */
        break;
      case OP_ANY:
        if (at < len && (in->nl || c != '\n'))
          add(re, nl, cl->t[i].pc + 1, cl->t[i].start, gen + 1, s, len, at + w, &steps);
        break;
      case OP_RANGES:
        if (at < len && in_ranges(re, in, c))
          add(re, nl, cl->t[i].pc + 1, cl->t[i].start, gen + 1, s, len, at + w, &steps);
        break;
      default:
        break;
      }
    }
    if (steps > *budget) {
      *budget = 0;
      return TS_ELIMIT;
    }
    if (at >= len) {
      tlist *t = cl;
      cl = nl, nl = t;
      gen++;
      /* threads after the end can only match (or assert) */
      for (uint32_t i = 0; i < cl->n && !matched; i++)
        if (re->prog[cl->t[i].pc].op == OP_MATCH)
          matched = true, *start = cl->t[i].start, *end = len;
      break;
    }
    {
      tlist *t = cl;
      cl = nl, nl = t;
    }
    at += w;
  }
  *budget -= steps;
  *found = matched;
  return TS_OK;
}
