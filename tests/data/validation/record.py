#!/usr/bin/env python3
# Records what a real kube-apiserver says of each object of cases.yaml (a dry-run create as
# the admin), into expected.json: accepted, or refused with the Status's reason and causes
# (field, message). Needs the server of tests/e2e/apiserver (TESSERA_APISERVER, default
# /tmp/apiserver) with namespace t, PriorityClass pc-100 (value 100) and the CRDs of
# tests/e2e/crds; run it after changing cases.yaml and commit both files.
import json, os, subprocess, sys, yaml
A = os.environ.get('TESSERA_APISERVER', '/tmp/apiserver')
TOKEN = 'admin-token-0123456789'
PLURAL = {'Pod': 'pods', 'Node': 'nodes', 'Namespace': 'namespaces', 'ResourceSlice': 'resourceslices',
          'ResourceClaim': 'resourceclaims', 'ClusterQueue': 'clusterqueues',
          'PriorityClass': 'priorityclasses', 'DeviceClass': 'deviceclasses'}
def path(o):
    av = o['apiVersion']
    base = '/api/' + av if '/' not in av else '/apis/' + av
    ns = o['metadata'].get('namespace')
    return base + ('/namespaces/%s' % ns if ns else '') + '/' + PLURAL[o['kind']]
def probe(o):
    r = subprocess.run(['curl', '-s', '--cacert', A + '/pki/ca.crt', '-H', 'Authorization: Bearer ' + TOKEN,
                        '-H', 'Content-Type: application/json', '-X', 'POST',
                        'https://127.0.0.1:6443' + path(o) + '?dryRun=All', '-d', json.dumps(o)],
                       capture_output=True, text=True, check=True)
    st = json.loads(r.stdout)
    if st.get('kind') != 'Status': return {'accepted': True}
    causes = [{'field': c.get('field', ''), 'message': c.get('message', '')}
              for c in (st.get('details') or {}).get('causes') or []]
    return {'accepted': False, 'reason': st.get('reason'), 'message': st.get('message'), 'causes': causes}
here = os.path.dirname(os.path.abspath(__file__))
cases = yaml.safe_load(open(os.path.join(here, 'cases.yaml')))
out = {c['name']: probe(c['object']) for c in cases}
json.dump(out, open(os.path.join(here, 'expected.json'), 'w'), indent=1, sort_keys=True)
print(len(out), 'cases,', sum(not v['accepted'] for v in out.values()), 'refused')
