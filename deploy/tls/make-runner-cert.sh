#!/usr/bin/env bash
# A private CA (made once) and a server certificate for one runner host, for RUNNER_TLS_CERT_FILE/KEY_FILE.
#
#   deploy/tls/make-runner-cert.sh DIR NAME [NAME|IP ...]
#
# DIR/ca.pem     the CA certificate: give it to the dispatchers (ARENA_FLEET_RUNNER_CA_FILE of the bot, and of
#                the API service where it dispatches)
# DIR/ca.key     the CA's key: keep it off the GPU hosts, and make the next runner's certificate with it
# DIR/NAME.crt   the runner's certificate, valid for every NAME and IP given (the address the runner advertises,
#                RUNNER_ADVERTISE_URL, must use one)
# DIR/NAME.key   its key, mode 0600: RUNNER_TLS_KEY_FILE
#
# The certificates pass Python's strict X.509 checks (key usage, key identifiers), which Python 3.13 turns on.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 DIR NAME [NAME|IP ...]   e.g. $0 /etc/kernel-arena/tls gpu-a.internal 10.0.0.7" >&2
  exit 2
fi
command -v openssl >/dev/null || { echo "$0: needs the openssl command" >&2; exit 2; }
dir=$1
shift
name=$1
umask 077
mkdir -p "$dir"
if [ ! -f "$dir/ca.pem" ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
    -subj "/CN=Kernel Arena runners CA" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -keyout "$dir/ca.key" -out "$dir/ca.pem" 2>"$dir/openssl.log" || { cat "$dir/openssl.log" >&2; exit 1; }
fi
san=""
for n in "$@"; do
  if [[ $n =~ ^[0-9.]+$ || $n == *:* ]]; then san+="IP:$n,"; else san+="DNS:$n,"; fi
done
ext=$(mktemp)
trap 'rm -f "$ext" "$dir/$name.csr" "$dir/openssl.log"' EXIT
printf '%s\n' "subjectAltName=${san%,}" "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature" \
  "extendedKeyUsage=serverAuth" "subjectKeyIdentifier=hash" "authorityKeyIdentifier=keyid" >"$ext"
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$name" \
  -keyout "$dir/$name.key" -out "$dir/$name.csr" 2>"$dir/openssl.log" || { cat "$dir/openssl.log" >&2; exit 1; }
openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial -days 825 \
  -extfile "$ext" -out "$dir/$name.crt" 2>"$dir/openssl.log" || { cat "$dir/openssl.log" >&2; exit 1; }
chmod 644 "$dir/ca.pem" "$dir/$name.crt"
echo "runner:      RUNNER_TLS_CERT_FILE=$dir/$name.crt RUNNER_TLS_KEY_FILE=$dir/$name.key" \
  "RUNNER_ADVERTISE_URL=https://$name:8700"
echo "dispatchers: ARENA_FLEET_RUNNER_CA_FILE=$dir/ca.pem"
