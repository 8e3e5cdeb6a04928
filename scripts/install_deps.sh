#!/bin/sh
# scripts/install_deps.sh [extra packages...] -- make sure Debian's build and test
# dependencies are present. As root, installs what is missing with apt-get; as anyone
# else, prints the exact apt-get line and fails. Why each package:
#   gcc make pkg-config     the build
#   liblua5.4-dev lua5.4    Lua 5.4 headers/library for the host and the module; stock lua5.4
#   libopenblas-dev         sgemm (loaded at run time, see core/gemm/blas.c)
#   libcjson-dev            safetensors headers and al.json
#   zlib1g-dev              gzip'd IDX/CIFAR files and the 20 Newsgroups tar.gz
#   libreadline-dev         line editing and history in the REPL (as lua5.4 has)
#   dataset-fashion-mnist   the real dataset the tests and the demo use
set -eu
pkgs="gcc make pkg-config liblua5.4-dev lua5.4 libopenblas-dev libcjson-dev zlib1g-dev libreadline-dev dataset-fashion-mnist $*"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -eq 0 ]; then
  echo "installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || true
  apt-get install -y -qq --no-install-recommends $missing
else
  echo "attnlab needs these Debian packages; run as root:"
  echo "  apt-get install -y$missing"
  exit 1
fi
