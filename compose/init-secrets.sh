#!/usr/bin/env bash
# Makes ./secrets for compose.yaml: one API key (printed once, stored only as its SHA-256), a
# self-signed TLS certificate unless you put your own tls.crt / tls.key there first, the webhook
# signing secret, the audit hash key and the Redis files of profile scale. A file that exists is kept:
# run it again after an upgrade to add the files a newer compose.yaml names.
# Files are readable by the container's user (uid/gid 10001) and nobody else but root.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p secrets
umask 077

if [ ! -s secrets/api_keys.txt ]; then
  key="$(openssl rand -base64 36 | tr -d '/+=\n' | cut -c1-40)"
  printf 'sha256:%s\n' "$(printf '%s' "$key" | sha256sum | cut -d' ' -f1)" > secrets/api_keys.txt
  echo "API key (shown once; only its hash is stored in secrets/api_keys.txt): $key"
else
  echo "secrets/api_keys.txt exists: kept (append sha256:<hex> lines to add keys)"
fi

if [ ! -s secrets/tls.crt ] || [ ! -s secrets/tls.key ]; then
  cn="${TLS_CN:-$(hostname -f 2>/dev/null || hostname)}"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 825 \
    -subj "/CN=${cn}" -addext "subjectAltName=DNS:${cn},DNS:localhost,IP:127.0.0.1" \
    -keyout secrets/tls.key -out secrets/tls.crt 2>/dev/null
  echo "self-signed certificate for ${cn}: $(openssl x509 -in secrets/tls.crt -noout -fingerprint -sha256)"
fi

if [ ! -s secrets/webhook_secret.txt ]; then
  # Standard Webhooks secret: whsec_ + base64 of 32 random bytes; give the same value to receivers.
  printf 'whsec_%s\n' "$(openssl rand -base64 32)" > secrets/webhook_secret.txt
  echo "webhook signing secret written to secrets/webhook_secret.txt (share it with your webhook receivers)"
fi

if [ ! -s secrets/audit_hash_key.txt ]; then
  # AUDIT_HASH_KEY_FILE: audit lines carry the HMAC-SHA-256 of the conversation under this key, so
  # reading the log without it confirms no guessed chat. A reviewer matching a chat needs it
  # (README: openssl dgst -hmac); a new key changes every hash, so keep it with the logs' lifetime.
  openssl rand -hex 32 > secrets/audit_hash_key.txt
  echo "audit hash key written to secrets/audit_hash_key.txt (reviewers matching audit lines need it; keep it)"
fi

if [ ! -s secrets/redis_url.txt ]; then
  # Profile scale: one ACL user for the appliance (the default user is off), its URL, and the AES-256
  # key that seals queued conversations in Redis (the same file for every replica).
  password="$(openssl rand -hex 24)"
  printf 'user default off\nuser appliance on >%s ~* &* +@all -@dangerous +info\n' "$password" > secrets/redis_users.acl
  printf 'redis://appliance:%s@redis:6379\n' "$password" > secrets/redis_url.txt
  openssl rand -base64 32 > secrets/redis_encryption_key.txt
  echo "Redis ACL user, URL and encryption key written to secrets/ (profile scale)"
fi

# Compose mounts these files as they are: the service runs as 10001:10001, Redis as 999.
files=(secrets/api_keys.txt secrets/tls.crt secrets/tls.key secrets/webhook_secret.txt secrets/audit_hash_key.txt secrets/redis_url.txt secrets/redis_encryption_key.txt)
# The certificate is public: readable by everyone, so clients on this host can trust it
# (curl --cacert secrets/tls.crt).
if [ "$(id -u)" -eq 0 ]; then
  chown 0:10001 "${files[@]}"
  chmod 0440 "${files[@]}"
  chmod 0444 secrets/tls.crt
  chown 0:999 secrets/redis_users.acl
  chmod 0440 secrets/redis_users.acl
else
  chmod 0644 secrets/tls.crt
  echo "not root: run 'sudo chown 0:10001 ${files[*]} && sudo chown 0:999 secrets/redis_users.acl && sudo chmod 0440 secrets/* && sudo chmod 0444 secrets/tls.crt'" \
    "(Redis runs as 999; or use rootless podman with --userns keep-id)"
fi
