#!/usr/bin/env bash
# The GPU-memory admission webhook's certificates (docs/gpu-memory.md §Deploying): a CA of its own
# and a server certificate it signs for the names the API server will call the webhook by. The API
# server trusts the CA through the MutatingWebhookConfiguration's caBundle; the server's pair goes
# into the Secret the webhook's Deployment mounts.
#
#   scripts/webhook-certificates.sh DIR [NAME...]
#
# NAME: DNS names or IP addresses; default the Service deploy/webhook.yaml defines
# (tessera-webhook.tessera-system.svc). Writes DIR/ca.crt, DIR/ca.key, DIR/tls.crt, DIR/tls.key
# (ECDSA P-256, valid for a year) and prints the caBundle (ca.crt, base64) on stdout.
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 DIR [NAME...]" >&2
  exit 2
fi
dir=$1
shift
names=("$@")
[[ ${#names[@]} -gt 0 ]] || names=(tessera-webhook.tessera-system.svc)
command -v openssl >/dev/null || { echo "$0: openssl is needed (Debian: apt-get install openssl)" >&2; exit 1; }

san=""
for name in "${names[@]}"; do
  if [[ $name =~ ^[0-9.]+$ || $name == *:* ]]; then san+="IP:$name,"; else san+="DNS:$name,"; fi
done
san=${san%,}

mkdir -p "$dir"
umask 077
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 365 \
  -subj "/CN=tessera-webhook-ca" -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
  -subj "/CN=${names[0]}" -keyout "$dir/tls.key" -out "$dir/tls.csr" 2>/dev/null
openssl x509 -req -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial -days 365 \
  -extfile <(printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature\n' "$san") \
  -out "$dir/tls.crt" 2>/dev/null
rm -f "$dir/tls.csr" "$dir/ca.srl"
base64 -w0 "$dir/ca.crt"
echo
