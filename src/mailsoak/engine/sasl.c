/* sasl: encodings and digests for AUTH and APOP. MD5 and HMAC-MD5 are what these
 * mechanisms specify; they are used here for compatibility, not for security. */
#include "engine/sasl.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <string.h>

#include "engine/reply.h"
#include "settings/config.h"

size_t sasl_b64(const void *in, size_t n, char *out)
{
    return (size_t)EVP_EncodeBlock((unsigned char *)out, in, (int)n);
}

static void hex(const unsigned char *b, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
}

int sasl_plain(const char *user, const char *pass, char *out, size_t outlen)
{
    char raw[600];
    size_t u = strlen(user), p = strlen(pass);
    if (u + p + 2 > sizeof raw || (u + p + 2 + 2) / 3 * 4 + 1 > outlen)
        return -1;
    raw[0] = 0;
    memcpy(raw + 1, user, u);
    raw[1 + u] = 0;
    memcpy(raw + 2 + u, pass, p);
    sasl_b64(raw, u + p + 2, out);
    return 0;
}

int sasl_cram_md5(const char *user, const char *pass, const char *challenge_b64, char *out, size_t outlen)
{
    unsigned char chal[512], mac[EVP_MAX_MD_SIZE];
    unsigned int maclen = 0;
    size_t cl = strlen(challenge_b64);
    if (cl == 0 || cl % 4 || cl / 4 * 3 > sizeof chal)
        return -1;
    /* The challenge is the server's, so hostile: base64 pads with at most two '=',
     * only at the end. EVP_DecodeBlock counts the padding as data and does not
     * check where it stands; "====" once made the length -1 (issue 13). */
    const char *eq = strchr(challenge_b64, '=');
    size_t pad = eq ? cl - (size_t)(eq - challenge_b64) : 0;
    if (pad > 2 || (pad && strspn(eq, "=") != pad))
        return -1;
    int n = EVP_DecodeBlock(chal, (const unsigned char *)challenge_b64, (int)cl);
    if (n < (int)pad)
        return -1;
    n -= (int)pad;
    if (!HMAC(EVP_md5(), pass, (int)strlen(pass), chal, (size_t)n, mac, &maclen))
        return -1;
    char resp[600];
    size_t u = strlen(user);
    if (u + 1 + 2 * maclen + 1 > sizeof resp)
        return -1;
    memcpy(resp, user, u);
    resp[u] = ' ';
    hex(mac, maclen, resp + u + 1);
    size_t rl = u + 1 + 2 * maclen;
    if ((rl + 2) / 3 * 4 + 1 > outlen)
        return -1;
    sasl_b64(resp, rl, out);
    return 0;
}

int pop3_apop(const char *banner, const char *pass, char hex33[33])
{
    const char *lt = strchr(banner, '<'), *gt = lt ? strchr(lt, '>') : NULL;
    if (!lt || !gt || !memchr(lt, '@', (size_t)(gt - lt)))
        return -1;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    int ok = c && EVP_DigestInit_ex(c, EVP_md5(), NULL) && EVP_DigestUpdate(c, lt, (size_t)(gt - lt + 1)) &&
             EVP_DigestUpdate(c, pass, strlen(pass)) && EVP_DigestFinal_ex(c, md, &mdlen);
    EVP_MD_CTX_free(c);
    if (!ok || mdlen != 16)
        return -1;
    hex(md, 16, hex33);
    return 0;
}

void smtp_auth_begin(struct auth_exchange *a, int mech, uint32_t ext, const char *user, const char *pass,
                     char *line, size_t n)
{
    char b64[700];
    if (mech == SMTP_AUTH_AUTO)
        mech = ext & EXT_AUTH_CRAM_MD5 ? SMTP_AUTH_CRAM_MD5
               : ext & EXT_AUTH_PLAIN ? SMTP_AUTH_PLAIN
               : ext & EXT_AUTH_LOGIN ? SMTP_AUTH_LOGIN : SMTP_AUTH_PLAIN;
    a->mech = mech;
    a->step = 0;
    if (mech == SMTP_AUTH_PLAIN && sasl_plain(user, pass, b64, sizeof b64) == 0)
        snprintf(line, n, "AUTH PLAIN %s", b64);
    else
        snprintf(line, n, "%s", mech == SMTP_AUTH_LOGIN ? "AUTH LOGIN" : "AUTH CRAM-MD5");
}

int smtp_auth_answer(struct auth_exchange *a, const char *user, const char *pass, const char *challenge,
                     char *line, size_t n)
{
    char b64[700];
    int ok;
    if (a->step >= 2)
        return 0;
    if (a->mech == SMTP_AUTH_LOGIN) {
        const char *v = a->step == 0 ? user : pass;
        ok = strlen(v) < 500 && (sasl_b64(v, strlen(v), b64), 1);
    } else if (a->mech == SMTP_AUTH_CRAM_MD5) {
        ok = sasl_cram_md5(user, pass, challenge, b64, sizeof b64) == 0;
    } else {
        ok = sasl_plain(user, pass, b64, sizeof b64) == 0;
    }
    a->step = ok ? a->step + 1 : 2;
    snprintf(line, n, "%s", ok ? b64 : "*");     /* RFC 4954: "*" cancels the exchange */
    return 1;
}
