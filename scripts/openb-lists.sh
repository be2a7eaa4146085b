#!/bin/sh
# scripts/openb-lists.sh [DIR]: the openb pod lists of the FGD paper's experiments, and its node
# list, fetched into DIR (default: traces/openb) for `tessera simulate` and scripts/fgd-compare.sh.
# They are Alibaba's openb traces as the paper's simulator publishes them
# (github.com/hkust-adsl/kubernetes-scheduler-simulator, data/csv/ at commit 8f3d641, under the
# Apache License 2.0; docs/simulate.md says what each list is). Each file's SHA-256 is checked:
# a file that differs is removed and named, and the script fails. OPENB_BASE overrides where they
# come from (a mirror; file:// works too). Needs curl (or wget).
set -eu
DIR=${1:-traces/openb}
BASE=${OPENB_BASE:-https://raw.githubusercontent.com/hkust-adsl/kubernetes-scheduler-simulator/8f3d6417353c5083c6d56617f255fadd8dc306bc/data/csv}
mkdir -p "$DIR"
fetch() {
  if command -v curl >/dev/null 2>&1; then
    curl -fsSL -o "$2" "$1"
  else
    wget -q -O "$2" "$1"
  fi
}
bad=0
while read -r file sum; do
  [ -n "$file" ] || continue
  out="$DIR/$file"
  if [ -f "$out" ] && echo "$sum  $out" | sha256sum -c - >/dev/null 2>&1; then
    echo "have $out"
    continue
  fi
  if ! fetch "$BASE/$file" "$out.part"; then
    echo "openb-lists: $BASE/$file: could not be fetched" >&2
    rm -f "$out.part"
    bad=1
    continue
  fi
  if ! echo "$sum  $out.part" | sha256sum -c - >/dev/null 2>&1; then
    echo "openb-lists: $file: SHA-256 is not $sum (removed)" >&2
    rm -f "$out.part"
    bad=1
    continue
  fi
  mv "$out.part" "$out"
  echo "got  $out"
done <<LISTS
openb_node_list_gpu_node.csv 2beca64b4d3dfa342036a34b56a495c6cef9225db836c81f541282cb1df320b5
openb_pod_list_default.csv 1ee7ed79c27a3b0861cda8ddba86a004c6aba904caafa329a76ae93ca63834a8
openb_pod_list_gpushare40.csv d83ce79a4eb6987524bedbb0c65e41aed3a36bf6c1b78b86234c3687a07e1d40
openb_pod_list_gpushare60.csv d31809628128a1f24491086eda4af3e23882b9213d3ef57a56ee2d1af69492fe
openb_pod_list_gpushare80.csv 88b6649369ced40d0fde287d2498ea61ff4b05fccba8bdc95daf6042f2f8431e
openb_pod_list_gpushare100.csv 12dbc07d6a49bf8641e2275a2ff5bf7be74b5df7d148d531e135b140b95f9a3d
openb_pod_list_gpuspec10.csv 2dc7e4cb9480484f08539720b433a9ec9ab5d76b396f3f7557c53a2ff78a7611
openb_pod_list_gpuspec20.csv 6b9b89ab8913c1c074e994e98f548cf1a872fc5f76f2442ca8cd514a478b00a9
openb_pod_list_gpuspec25.csv 9d030679a2ccd7e27a7ec9ff15baff34480d22a0012515691fc187e3f35ee68c
openb_pod_list_gpuspec33.csv eca4f746db1e5b25864ad021b55ece3943e101a3ebd4574d09dcb95c46117652
openb_pod_list_multigpu20.csv d9ec6f6c74fb980cc0b81239470c6353fceea077ea9abd610003b604c7cc2b01
openb_pod_list_multigpu30.csv a5e479c6444b1d83eef848159cf00c3cfa13441b2d1e2c113c391b91f1cc5b11
openb_pod_list_multigpu40.csv 32c9e8731ca07ef96108aa65f2a289bb9aacb47f642ed9e3789f99b242df60eb
openb_pod_list_multigpu50.csv 206f2f5959db30ecb7c44e7f13197c8ec50b7a35558ad3777cc3662ef0fe5373
openb_pod_list_cpu050.csv 747f43247bffc2b0bb081d7f61f0705ca8d390dafc0b647e642c92f3baf3ba1e
openb_pod_list_cpu100.csv bec1c33fbdde61fd463877534ec79b393aec73e1cbb22d55fab9f166ac480982
openb_pod_list_cpu200.csv b7e9d8a1a601da84d6e0b4110b19ef5001be5e4796d33e7b82f166ba95161f87
openb_pod_list_cpu250.csv 134c21ff96d57533df8a37b67632972884fec9396e77cd0898ddc370cc8e607d
LISTS
exit $bad
