/* kubeclient/serve_tls.c - TLS for the endpoints Tessera serves (kc.h): the certificate of a
 * directory, reloaded when its files change (cert-manager renews them in place), or a
 * self-signed one made at start, as controller-runtime's secure metrics serving does when it is
 * given no directory; and a session over memory buffers, so that the caller keeps its own
 * sockets (libuv) and this room keeps OpenSSL. */
#include <errno.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "kubeclient/kc_int.h"

#define RELOAD_CHECK_S 10 /* how often the files' times are looked at */

struct kc_tls_server {
  SSL_CTX *ctx;                 /* the current certificate */
  char dir[KC_TLS_DIR_MAX];     /* cert_dir, "" when self-signed */
  struct timespec crt_t, key_t; /* the files' modification times when loaded */
  time_t checked;               /* last look at them */
  uint64_t reloads;             /* certificates loaded after the first */
};

struct kc_tls_conn {
  SSL *ssl;
  BIO *in, *out; /* ciphertext received, to send */
  bool failed;
};

/* The OpenSSL errors queued, into err (and the queue emptied). */
static ts_rc ssl_error(ts_err *err, const char *what) {
  char text[256] = "";
  unsigned long e = ERR_get_error();
  if (e) ERR_error_string_n(e, text, sizeof text);
  ERR_clear_error();
  return ts_err_set(err, TS_EINVAL, "%s%s%s", what, *text ? ": " : "", text);
}

static SSL_CTX *new_ctx(void) {
  SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
  if (!ctx) return NULL;
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION); /* controller-runtime's floor */
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
  return ctx;
}

/* A self-signed certificate for name (and localhost, 127.0.0.1), a year long. */
static SSL_CTX *self_signed(const char *name, ts_err *err) {
  EVP_PKEY *key = EVP_EC_gen("P-256");
  X509 *x = X509_new();
  SSL_CTX *ctx = NULL;
  X509V3_CTX v3;
  X509_EXTENSION *ext = NULL;
  char san[400];
  unsigned char serial[16];
  BIGNUM *bn = NULL;
  if (!key || !x) goto fail;
  X509_set_version(x, 2);
  if (RAND_bytes(serial, sizeof serial) != 1 || !(bn = BN_bin2bn(serial, sizeof serial, NULL)) ||
      !BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)))
    goto fail;
  X509_gmtime_adj(X509_getm_notBefore(x), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x), 365L * 86400);
  X509_set_pubkey(x, key);
  X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_UTF8,
                             (const unsigned char *)name, -1, -1, 0);
  X509_set_issuer_name(x, X509_get_subject_name(x));
  X509V3_set_ctx(&v3, x, x, NULL, NULL, 0);
  snprintf(san, sizeof san, "DNS:%s,DNS:localhost,IP:127.0.0.1", name);
  if (!(ext = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_alt_name, san)) ||
      !X509_add_ext(x, ext, -1) || !X509_sign(x, key, EVP_sha256()))
    goto fail;
  if (!(ctx = new_ctx()) || SSL_CTX_use_certificate(ctx, x) != 1 ||
      SSL_CTX_use_PrivateKey(ctx, key) != 1)
    goto fail;
  X509_EXTENSION_free(ext), X509_free(x), EVP_PKEY_free(key), BN_free(bn);
  return ctx;
fail:
  ssl_error(err, "cannot make a self-signed certificate");
  SSL_CTX_free(ctx), X509_EXTENSION_free(ext), X509_free(x), EVP_PKEY_free(key), BN_free(bn);
  return NULL;
}

static bool file_time(const char *path, struct timespec *t) {
  struct stat st;
  if (stat(path, &st)) return false;
  *t = st.st_mtim;
  return true;
}

/* The certificate of s->dir (tls.crt, tls.key), their times into s. */
static SSL_CTX *from_dir(kc_tls_server *s, ts_err *err) {
  char crt[KC_TLS_DIR_MAX + 16], key[KC_TLS_DIR_MAX + 16];
  SSL_CTX *ctx;
  snprintf(crt, sizeof crt, "%s/tls.crt", s->dir);
  snprintf(key, sizeof key, "%s/tls.key", s->dir);
  if (!file_time(crt, &s->crt_t))
    return ts_err_set(err, TS_EINVAL, "%s: %s", crt, strerror(errno)), NULL;
  if (!file_time(key, &s->key_t))
    return ts_err_set(err, TS_EINVAL, "%s: %s", key, strerror(errno)), NULL;
  if (!(ctx = new_ctx())) return ssl_error(err, "TLS"), NULL;
  if (SSL_CTX_use_certificate_chain_file(ctx, crt) != 1) {
    ssl_error(err, crt);
    return SSL_CTX_free(ctx), NULL;
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(ctx) != 1) {
    ssl_error(err, key);
    return SSL_CTX_free(ctx), NULL;
  }
  return ctx;
}

kc_tls_server *kc_tls_server_new(const char *cert_dir, const char *name, ts_err *err) {
  kc_tls_server *s = ts_calloc(1, sizeof *s);
  if (!s) return ts_err_set(err, TS_ENOMEM, "out of memory"), NULL;
  if (cert_dir && *cert_dir) {
    if (strlen(cert_dir) >= sizeof s->dir)
      return ts_free(s), ts_err_set(err, TS_EINVAL, "%s: path too long", cert_dir), NULL;
    snprintf(s->dir, sizeof s->dir, "%s", cert_dir);
    s->ctx = from_dir(s, err);
    s->checked = time(NULL);
  } else {
    s->ctx = self_signed(name && *name ? name : "tessera", err);
  }
  if (!s->ctx) return ts_free(s), NULL;
  return s;
}

void kc_tls_server_free(kc_tls_server *s) {
  if (!s) return;
  SSL_CTX_free(s->ctx);
  ts_free(s);
}

uint64_t kc_tls_server_reloads(const kc_tls_server *s) {
  return s ? s->reloads : 0;
}

/* Loads the directory's certificate again when a file changed since it was read (looked at
 * once per RELOAD_CHECK_S). A pair that does not load (half written) keeps the old one. */
static void maybe_reload(kc_tls_server *s) {
  struct timespec c, k;
  time_t now = time(NULL);
  SSL_CTX *ctx;
  char crt[KC_TLS_DIR_MAX + 16], key[KC_TLS_DIR_MAX + 16];
  ts_err err;
  if (!s->dir[0] || now - s->checked < RELOAD_CHECK_S) return;
  s->checked = now;
  snprintf(crt, sizeof crt, "%s/tls.crt", s->dir);
  snprintf(key, sizeof key, "%s/tls.key", s->dir);
  if (!file_time(crt, &c) || !file_time(key, &k) ||
      (!memcmp(&c, &s->crt_t, sizeof c) && !memcmp(&k, &s->key_t, sizeof k)))
    return;
  ts_err_clear(&err);
  if (!(ctx = from_dir(s, &err))) {
    ts_log(TS_LOG_WARN, "TLS certificate in %s not reloaded: %s", s->dir, err.text);
    return;
  }
  SSL_CTX_free(s->ctx); /* sessions under way keep their reference */
  s->ctx = ctx;
  s->reloads++;
  ts_log(TS_LOG_INFO, "TLS certificate in %s reloaded", s->dir);
}

kc_tls_conn *kc_tls_conn_new(kc_tls_server *s) {
  kc_tls_conn *c = ts_calloc(1, sizeof *c);
  if (!c) return NULL;
  maybe_reload(s);
  c->in = BIO_new(BIO_s_mem());
  c->out = BIO_new(BIO_s_mem());
  if (!c->in || !c->out || !(c->ssl = SSL_new(s->ctx))) {
    BIO_free(c->in), BIO_free(c->out);
    ts_free(c);
    return NULL;
  }
  SSL_set_bio(c->ssl, c->in, c->out); /* the session owns both now */
  SSL_set_accept_state(c->ssl);
  return c;
}

void kc_tls_conn_free(kc_tls_conn *c) {
  if (!c) return;
  SSL_free(c->ssl);
  ts_free(c);
}

/* Whether an SSL call's result r is a failure of the session (not "wants more input"). */
static bool broken(kc_tls_conn *c, int r) {
  int e = SSL_get_error(c->ssl, r);
  if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return false;
  ERR_clear_error();
  return c->failed = true;
}

ssize_t kc_tls_conn_feed(kc_tls_conn *c, const void *in, size_t n, void *out, size_t cap) {
  int r;
  size_t got = 0;
  if (c->failed) return -1;
  if (n && BIO_write(c->in, in, (int)n) != (int)n) return c->failed = true, -1;
  if (!SSL_is_init_finished(c->ssl) && (r = SSL_do_handshake(c->ssl)) != 1)
    return broken(c, r) ? -1 : 0;
  while (got < cap) {
    size_t one = 0;
    if ((r = SSL_read_ex(c->ssl, (char *)out + got, cap - got, &one)) != 1) {
      if (SSL_get_error(c->ssl, r) == SSL_ERROR_ZERO_RETURN) break; /* close_notify */
      if (broken(c, r)) return got ? (ssize_t)got : -1;
      break;
    }
    got += one;
  }
  return (ssize_t)got;
}

int kc_tls_conn_write(kc_tls_conn *c, const void *in, size_t n) {
  size_t done = 0;
  if (c->failed || !SSL_is_init_finished(c->ssl)) return -1;
  if (n && SSL_write_ex(c->ssl, in, n, &done) != 1) {
    ERR_clear_error();
    return c->failed = true, -1;
  }
  SSL_shutdown(c->ssl); /* one answer per connection: close_notify follows it */
  return 0;
}

char *kc_tls_conn_output(kc_tls_conn *c, size_t *len) {
  size_t n = BIO_ctrl_pending(c->out);
  char *p;
  *len = 0;
  if (!n || !(p = malloc(n))) return NULL;
  if (BIO_read(c->out, p, (int)n) != (int)n) return free(p), NULL;
  *len = n;
  return p;
}

void kc_sha256_hex(const void *data, size_t n, char out[65]) {
  unsigned char md[32];
  unsigned int len = 0;
  static const char hex[] = "0123456789abcdef";
  EVP_Digest(data, n, md, &len, EVP_sha256(), NULL);
  for (unsigned i = 0; i < 32; i++) out[2 * i] = hex[md[i] >> 4], out[2 * i + 1] = hex[md[i] & 15];
  out[64] = '\0';
}
