#!/usr/bin/env bash
# A real Kubernetes control plane (etcd + kube-apiserver) as local processes, envtest style.
#
#   scripts/control-plane.sh up DIR              start; returns when /readyz answers; writes DIR/kubeconfig
#   scripts/control-plane.sh down DIR            stop exactly the processes `up` started in DIR
#   scripts/control-plane.sh stop-apiserver DIR  stop only kube-apiserver (restart tests)
#   scripts/control-plane.sh start-apiserver DIR start it again with the same ports and certificates
#   scripts/control-plane.sh status DIR          print what runs
#
# Everything listens on 127.0.0.1 on free ports. CONTROL_PLANE_PROFILE=cluster makes the API server one
# that pods run against (e2e/stand-in/cluster.ts): the ServiceAccount admission plugin on (it mounts
# each pod's token), and Service references (webhooks) resolved to a ready endpoint rather than the
# ClusterIP, since no kube-proxy runs here (--enable-aggregator-routing). The default profile turns the
# plugin off: with no controller-manager, no namespace gets its default ServiceAccount, and the plugin
# would refuse every pod. The admin user in DIR/kubeconfig is a client
# certificate in group system:masters; authorization is RBAC. Towards admission webhooks the API server
# presents DIR/pki/webhook-client.crt, signed by DIR/pki/webhook-client-ca.crt (the CA a webhook's
# --client-ca-file names). PodTemplates bypass the watch cache
# (nothing of ours uses them) so informer tests can observe a real etcd compaction as 410 Gone.
# Binaries come from
# scripts/lib/k8s-binaries.sh ($KUBEBUILDER_ASSETS, a versioned cache, or a Go build).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
READY_TIMEOUT="${CONTROL_PLANE_READY_TIMEOUT:-90}"

die() { printf 'control-plane: %s\n' "$*" >&2; exit 1; }
log() { printf 'control-plane: %s\n' "$*" >&2; }

usage() { sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# Is PID alive and one of ours (its command line mentions DIR)?
ours() {
  local pid="$1" dir="$2"
  [[ -n "$pid" && -r "/proc/$pid/cmdline" ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$dir"
}

stop_one() {
  local name="$1" dir="$2" pidfile="$2/$1.pid" pid
  [[ -f "$pidfile" ]] || return 0
  pid="$(cat "$pidfile")"
  if ours "$pid" "$dir"; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do ours "$pid" "$dir" || break; sleep 0.1; done
    if ours "$pid" "$dir"; then
      log "$name (pid $pid) ignored SIGTERM for 10s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do ours "$pid" "$dir" || break; sleep 0.1; done
    fi
  fi
  rm -f "$pidfile"
}

gen_certs() {
  local d="$1/pki"
  mkdir -p "$d"
  (
    cd "$d"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 \
      -subj "/CN=metal-maintenance-test-ca" 2>/dev/null
    # Serving certificate: Go clients require the IP SAN.
    openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr \
      -subj "/CN=kube-apiserver" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n' >apiserver.ext
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out apiserver.crt \
      -days 3650 -extfile apiserver.ext 2>/dev/null
    # Admin client certificate.
    openssl req -newkey rsa:2048 -nodes -keyout admin.key -out admin.csr \
      -subj "/O=system:masters/CN=metal-maintenance-admin" 2>/dev/null
    printf 'extendedKeyUsage=clientAuth\n' >admin.ext
    openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out admin.crt \
      -days 3650 -extfile admin.ext 2>/dev/null
    # The API server's client certificate towards admission webhooks, from a CA of its own: a webhook
    # trusts that CA alone, so no other client (not even the admin) can call it.
    openssl req -x509 -newkey rsa:2048 -nodes -keyout webhook-client-ca.key -out webhook-client-ca.crt \
      -days 3650 -subj "/CN=metal-maintenance-test-webhook-client-ca" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout webhook-client.key -out webhook-client.csr \
      -subj "/CN=kube-apiserver-webhook-client" 2>/dev/null
    printf 'extendedKeyUsage=clientAuth\n' >webhook-client.ext
    openssl x509 -req -in webhook-client.csr -CA webhook-client-ca.crt -CAkey webhook-client-ca.key \
      -CAcreateserial -out webhook-client.crt -days 3650 -extfile webhook-client.ext 2>/dev/null
    # Service-account token signing key.
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    rm -f ./*.csr ./*.ext ./*.srl
  )
}

# How the API server authenticates to admission webhooks: one client certificate for every webhook
# ('*' matches any host), given to both webhook admission plugins.
write_admission_config() {
  local dir="$1" d="$1/admission"
  mkdir -p "$d"
  cat >"$d/webhook-kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
users:
- name: '*'
  user:
    client-certificate: $dir/pki/webhook-client.crt
    client-key: $dir/pki/webhook-client.key
KUBECONFIG
  cat >"$d/config.yaml" <<CONFIG
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ValidatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: $d/webhook-kubeconfig
- name: MutatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: $d/webhook-kubeconfig
CONFIG
}

write_kubeconfig() {
  local dir="$1" port="$2" b64
  b64() { base64 -w0 <"$1"; }
  cat >"$dir/kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:${port}
    certificate-authority-data: $(b64 "$dir/pki/ca.crt")
users:
- name: admin
  user:
    client-certificate-data: $(b64 "$dir/pki/admin.crt")
    client-key-data: $(b64 "$dir/pki/admin.key")
contexts:
- name: local
  context: {cluster: local, user: admin}
current-context: local
KUBECONFIG
  chmod 600 "$dir/kubeconfig"
}

start_etcd() {
  local dir="$1"
  # shellcheck disable=SC1091
  source "$dir/ports.env"
  setsid "$BIN/etcd" \
    --name default \
    --data-dir "$dir/etcd-data" \
    --listen-client-urls "http://127.0.0.1:${ETCD_PORT}" \
    --advertise-client-urls "http://127.0.0.1:${ETCD_PORT}" \
    --listen-peer-urls "http://127.0.0.1:${ETCD_PEER_PORT}" \
    --initial-advertise-peer-urls "http://127.0.0.1:${ETCD_PEER_PORT}" \
    --initial-cluster "default=http://127.0.0.1:${ETCD_PEER_PORT}" \
    --unsafe-no-fsync \
    --log-level warn \
    >>"$dir/etcd.log" 2>&1 </dev/null &
  echo $! >"$dir/etcd.pid"
  for _ in $(seq 1 200); do
    curl -sf "http://127.0.0.1:${ETCD_PORT}/health" >/dev/null 2>&1 && return 0
    ours "$(cat "$dir/etcd.pid")" "$dir" || { tail -20 "$dir/etcd.log" >&2; die "etcd exited during start (log: $dir/etcd.log)"; }
    sleep 0.1
  done
  die "etcd did not become healthy within 20s (log: $dir/etcd.log)"
}

start_apiserver() {
  local dir="$1"
  # shellcheck disable=SC1091
  source "$dir/ports.env"
  [[ -x "${BIN:-}/kube-apiserver" ]] || BIN="$(cat "$dir/bin-dir")"
  mkdir -p "$dir/apiserver-certs"
  local profile=(--disable-admission-plugins ServiceAccount)
  [[ "${PROFILE:-default}" == cluster ]] && profile=(--enable-aggregator-routing=true)
  setsid "$BIN/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:${ETCD_PORT}" \
    --bind-address 127.0.0.1 \
    --advertise-address 127.0.0.1 \
    --secure-port "${APISERVER_PORT}" \
    --cert-dir "$dir/apiserver-certs" \
    --tls-cert-file "$dir/pki/apiserver.crt" \
    --tls-private-key-file "$dir/pki/apiserver.key" \
    --client-ca-file "$dir/pki/ca.crt" \
    --service-account-issuer "https://127.0.0.1:${APISERVER_PORT}" \
    --service-account-key-file "$dir/pki/sa.pub" \
    --service-account-signing-key-file "$dir/pki/sa.key" \
    --service-cluster-ip-range 10.0.0.0/24 \
    --authorization-mode RBAC \
    "${profile[@]}" \
    --admission-control-config-file "$dir/admission/config.yaml" \
    --allow-privileged=true \
    --profiling="${APISERVER_PROFILING:-false}" \
    --watch-cache-sizes podtemplates#0 \
    --v=0 \
    >>"$dir/kube-apiserver.log" 2>&1 </dev/null &
  echo $! >"$dir/kube-apiserver.pid"
  local deadline=$((SECONDS + READY_TIMEOUT))
  while ((SECONDS < deadline)); do
    if curl -sf --cacert "$dir/pki/ca.crt" --cert "$dir/pki/admin.crt" --key "$dir/pki/admin.key" \
      "https://127.0.0.1:${APISERVER_PORT}/readyz" >/dev/null 2>&1; then
      return 0
    fi
    ours "$(cat "$dir/kube-apiserver.pid")" "$dir" || {
      tail -30 "$dir/kube-apiserver.log" >&2
      die "kube-apiserver exited during start (log: $dir/kube-apiserver.log)"
    }
    sleep 0.2
  done
  die "kube-apiserver did not answer /readyz within ${READY_TIMEOUT}s (log: $dir/kube-apiserver.log)"
}

cmd_up() {
  local dir="$1"
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  if [[ -f "$dir/etcd.pid" ]] && ours "$(cat "$dir/etcd.pid")" "$dir"; then
    die "$dir already holds a running control plane; run 'down' first"
  fi
  command -v openssl >/dev/null || die "openssl is required (apt-get install openssl)"
  command -v curl >/dev/null || die "curl is required (apt-get install curl)"
  BIN="$("$HERE/lib/k8s-binaries.sh")"
  echo "$BIN" >"$dir/bin-dir"
  rm -rf "$dir/etcd-data" "$dir/pki" "$dir/apiserver-certs" "$dir/admission" "$dir"/*.log
  gen_certs "$dir"
  write_admission_config "$dir"
  {
    echo "ETCD_PORT=$(free_port)"
    echo "ETCD_PEER_PORT=$(free_port)"
    echo "APISERVER_PORT=$(free_port)"
    # Kept with the ports, so start-apiserver restarts the same API server.
    echo "PROFILE=${CONTROL_PLANE_PROFILE:-default}"
  } >"$dir/ports.env"
  # If anything below fails, leave nothing running.
  trap 'cmd_down "$dir" >/dev/null 2>&1 || true' ERR
  start_etcd "$dir"
  start_apiserver "$dir"
  trap - ERR
  # shellcheck disable=SC1091
  source "$dir/ports.env"
  write_kubeconfig "$dir" "$APISERVER_PORT"
  log "ready: https://127.0.0.1:${APISERVER_PORT} (KUBECONFIG=$dir/kubeconfig)"
}

cmd_down() {
  local dir="$1"
  [[ -d "$dir" ]] || return 0
  dir="$(cd "$dir" && pwd)"
  stop_one kube-apiserver "$dir"
  stop_one etcd "$dir"
}

[[ $# -eq 2 ]] || usage
case "$1" in
  up) cmd_up "$2" ;;
  down) cmd_down "$2" ;;
  stop-apiserver) d="$(cd "$2" && pwd)"; stop_one kube-apiserver "$d" ;;
  start-apiserver) d="$(cd "$2" && pwd)"; BIN="$(cat "$d/bin-dir")"; start_apiserver "$d" ;;
  status)
    d="$(cd "$2" && pwd)"
    for n in etcd kube-apiserver; do
      if [[ -f "$d/$n.pid" ]] && ours "$(cat "$d/$n.pid")" "$d"; then echo "$n running (pid $(cat "$d/$n.pid"))"; else echo "$n stopped"; fi
    done
    ;;
  *) usage ;;
esac
