#!/usr/bin/env bash
# Builds the images, then runs each compose file in turn with calls through it whose audio is
# checked (docker/smoke-call.ts: the answer's Speak and Play heard by examples/call-in.ts on
# this machine), and takes everything down again, volumes included. It needs a Docker engine,
# Compose (`docker compose`, or docker-compose 1.29), ports 5060, 5066, 8080, 8081 and
# 20000-20199 free, and this repository set up (scripts/setup): the caller runs here. Not part
# of npm test.
#
#   docker/smoke-test.sh             # both: single, then cluster
#   docker/smoke-test.sh single      # docker/compose.yaml only
#   docker/smoke-test.sh cluster     # docker/compose.cluster.yaml only
#
# SMOKE_HOST: this machine's address given to the single node as VOXGATE_PUBLIC_HOST, which the
#   caller calls from and the containers fetch the answer from (default: the source address of
#   the default route).
# SMOKE_BUILD_NETWORK: `docker build --network` (e.g. host, on an engine whose bridge has no NAT).
set -euo pipefail
cd "$(dirname "$0")/.."

project=voxgate-smoke
work=$(mktemp -d)
running=""

compose() {
  if docker compose version >/dev/null 2>&1; then
    docker compose -p "$project" --env-file "$work/env" "$@"
  else
    docker-compose -p "$project" --env-file "$work/env" "$@"
  fi
}

cleanup() {
  if [ -n "$running" ]; then
    echo "smoke: taking down $running"
    compose -f "$running" down -v --remove-orphans >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

step() { echo "smoke: $(date -u +%H:%M:%S) $*"; }

wait_healthy() {
  local url=$1
  for _ in $(seq 1 90); do
    curl -fsS -o /dev/null "$url" 2>/dev/null && return 0
    sleep 1
  done
  echo "smoke: $url did not answer 200 within 90 s" >&2
  return 1
}

# The (first) account's application count, as a number.
applications() {
  curl -fsS -u "$1:$2" "http://127.0.0.1:8080/v1/Account/$1/Application/" |
    node -pe 'JSON.parse(require("fs").readFileSync(0)).meta.total_count'
}

call() {
  SMOKE_API=$1 SMOKE_SIP=$2 SMOKE_LOCAL_HOST=$3 SMOKE_AUTH_ID=$4 SMOKE_AUTH_TOKEN=$5 \
    node --import tsx docker/smoke-call.ts
}

build() {
  local network=()
  [ -n "${SMOKE_BUILD_NETWORK:-}" ] && network=(--network "$SMOKE_BUILD_NETWORK")
  step "building voxgate (docker/Dockerfile)"
  docker build "${network[@]}" -q -t voxgate -f docker/Dockerfile . >/dev/null
  step "image voxgate: $(docker image inspect voxgate --format '{{.Size}}' |
    awk '{ printf "%.0f MB", $1 / 1e6 }')"
  if [[ " $* " == *" cluster "* ]]; then
    step "building voxgate-kamailio (docker/kamailio)"
    docker build "${network[@]}" -q -t voxgate-kamailio docker/kamailio >/dev/null
  fi
}

single() {
  local host=${SMOKE_HOST:-$(ip -4 route get 1.1.1.1 | sed -n 's/.* src \([0-9.]*\).*/\1/p')}
  {
    echo "VOXGATE_PUBLIC_HOST=$host"
    echo "VOXGATE_SECRET_KEY=$(openssl rand -hex 32)"
  } >"$work/env"
  running=docker/compose.yaml
  step "single node: up (VOXGATE_PUBLIC_HOST=$host, RTP 20000-20199 published)"
  compose -f "$running" up -d
  wait_healthy http://127.0.0.1:8080/health
  # The main account the first start generated, in the data volume, written as the image's user.
  local owner
  owner=$(compose -f "$running" exec -T gateway sh -c 'echo $(id -un) $(stat -c "%U %a" /data/main-account.env)')
  [ "$owner" = "node node 600" ] || { echo "smoke: user, file owner, mode: $owner" >&2; exit 1; }
  step "single node: runs as node, main-account.env is node's, mode 600"
  compose -f "$running" exec -T gateway cat /data/main-account.env >"$work/account"
  local id token
  id=$(sed -n 's/^VOXGATE_AUTH_ID=//p' "$work/account")
  token=$(sed -n 's/^VOXGATE_AUTH_TOKEN=//p' "$work/account")
  step "single node: call from $host to $host:5060"
  call http://127.0.0.1:8080 "$host:5060" "$host" "$id" "$token"
  # Down and up again: the account file and Redis's data are kept in their volumes.
  step "single node: down and up, volumes kept"
  compose -f "$running" down
  compose -f "$running" up -d
  wait_healthy http://127.0.0.1:8080/health
  compose -f "$running" exec -T gateway cat /data/main-account.env | cmp - "$work/account"
  local apps
  apps=$(applications "$id" "$token")
  [ "$apps" = 1 ] || { echo "smoke: $apps applications after up again, 1 wanted" >&2; exit 1; }
  step "single node: the account and its application outlived down; calling again"
  call http://127.0.0.1:8080 "$host:5060" "$host" "$id" "$token"
  compose -f "$running" down -v
  running=""
  step "single node: OK"
}

cluster() {
  local id token
  id=MA$(openssl rand -hex 9 | tr a-f A-F)
  token=$(openssl rand -hex 20)
  {
    echo "VOXGATE_AUTH_ID=$id"
    echo "VOXGATE_AUTH_TOKEN=$token"
    echo "VOXGATE_SECRET_KEY=$(openssl rand -hex 32)"
  } >"$work/env"
  running=docker/compose.cluster.yaml
  step "cluster: up"
  compose -f "$running" up -d
  wait_healthy http://127.0.0.1:8080/health
  wait_healthy http://127.0.0.1:8081/health
  # Kamailio takes a node into its set once it answers a probe.
  sleep 5
  # This machine is 172.28.0.1 on the compose network: Kamailio (172.28.0.10) and the nodes'
  # RTP addresses are reached directly, and the nodes reach the caller and the answer server.
  for n in 1 2; do
    step "cluster: call $n through Kamailio"
    call http://127.0.0.1:8080 172.28.0.10:5060 172.28.0.1 "$id" "$token"
  done
  compose -f "$running" down -v
  running=""
  step "cluster: OK"
}

which=("$@")
[ ${#which[@]} -eq 0 ] && which=(single cluster)
for w in "${which[@]}"; do
  case "$w" in
    single | cluster) ;;
    *) echo "usage: docker/smoke-test.sh [single] [cluster]" >&2; exit 2 ;;
  esac
done
build "${which[@]}"
for w in "${which[@]}"; do "$w"; done
step "all OK ($(date -u +%Y-%m-%d))"
