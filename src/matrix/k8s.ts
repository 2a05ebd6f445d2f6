import { shellLine } from '../util/argv.js';
import { isDnsLabel, isDnsSubdomain, isGitUrl, isLabelKey, isLabelValue } from '../util/names.js';
import type { DeviceTable } from '../gpu/devices.js';
import { deviceIdsOf } from '../gpu/devices.js';
import { CI_PATHS, header, installNode, PREPARE_TREE, testCommand, type EmitOptions } from './emit.js';
import { GPU_CAPABILITIES } from './gpu-access.js';
import type { Matrix } from './plan.js';
import { toolSetup } from './tool-source.js';
import { CiValueError, emitYaml } from './yaml-out.js';

export interface K8sOptions {
  /** The overlay's git URL, fetched by each pod at `commit`. */
  repo: string;
  /** The full commit id of the overlay the pods test: a branch can move between two pods. */
  commit: string;
  /** Select nodes by this label (value: the gfx) instead of amd.com/gpu.device-id. */
  nodeLabel?: string;
  devices: DeviceTable;
  /** The ReadWriteMany claim holding binary packages, distfiles and reports: written into the file. */
  claim: string;
  /** Its requested size, a Kubernetes quantity. */
  claimSize: string;
  namespace?: string;
}

/** A Kubernetes resource quantity as a claim's size takes it: 200Gi, 1Ti, 500G. */
const QUANTITY = /^[0-9]+(?:\.[0-9]+)?(?:Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/;

/** Where each pod fetches the overlay. */
const OVERLAY = '/work/overlay';

function trusts(k8s: Omit<K8sOptions, 'devices'>): string[] {
  return [
    'What it trusts: whoever applies it (nothing is triggered by a pull request), the',
    `overlay at commit ${k8s.commit} of ${k8s.repo}`,
    '(fetched by its id: a branch moving meanwhile changes nothing), the stage3 image',
    'and the pinned rocm-ebuild. Every pod: no service account token, not',
    'privileged, no privilege escalation, the runtime\'s default seccomp profile; a GPU',
    "pod gets amd.com/gpu: 1 (AMD's device plugin gives it /dev/kfd and one render",
    "node) and CAP_SYS_NICE (ROCr's NUMA memory calls, which the default profile",
    'allows only with it).',
    '',
    `The claim ${k8s.claim} (ReadWriteMany, ${k8s.claimSize}) is the first document: it holds binary`,
    'packages, distfiles and reports; the cluster\'s default storage class must offer',
    'ReadWriteMany, or create the claim yourself and drop that document. The gfx',
    'jobs wait until the base job has marked its binary packages done.',
  ];
}

/**
 * Kubernetes: the ReadWriteMany claim the Jobs share, then batch/v1 Jobs —
 * the base and one per gfx (and shard). Each gfx pod asks for one
 * `amd.com/gpu` (AMD's device plugin gives it /dev/kfd and one render node),
 * runs non-privileged under the runtime's default seccomp profile with
 * CAP_SYS_NICE added (gpu-access.ts), on a node selected by the device ids of
 * its gfx (AMD's node labeller has no gfx label) or by a label the user
 * names. Binary packages live on the claim; gfx jobs wait for the base job's
 * mark there. Every container runs the stage3 image the user named: the
 * overlay is fetched at a pinned commit and the wait is done in it, so no
 * other image (a floating alpine/git or busybox tag) runs on the GPU nodes.
 */
export function k8sJobs(m: Matrix, options: EmitOptions, k8s: K8sOptions): string {
  const release = m.version.replace(/\./g, '');
  const mark = `${CI_PATHS.pkgdir}/.rocm-ebuild-base-${m.version}`;
  const tool = toolSetup(options.tool);
  const namespace = k8s.namespace ? { namespace: k8s.namespace } : {};
  const claim = {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: k8s.claim, ...namespace, labels: { 'app.kubernetes.io/name': 'rocm-ebuild' } },
    spec: { accessModes: ['ReadWriteMany'], resources: { requests: { storage: k8s.claimSize } } },
  };
  const fetchOverlay = [
    shellLine(['git', 'init', '-q', '--', OVERLAY]),
    shellLine(['git', '-C', OVERLAY, 'fetch', '-q', '--depth=1', '--', k8s.repo, k8s.commit]),
    shellLine(['git', '-C', OVERLAY, 'checkout', '-q', '--detach', k8s.commit, '--']),
  ];
  const jobs = m.jobs.map((j) => {
    const name = `rocm-ebuild-${release}-${j.id}`.toLowerCase();
    // Job names become the pods' job-name label: a DNS subdomain that is also a label value.
    if (!isDnsSubdomain(name) || !isLabelValue(name)) throw new CiValueError(`the Job of ${j.id}`, name, 'not a valid Kubernetes Job name (63 characters at most, lower-case letters, digits and -)');
    const labels = { 'app.kubernetes.io/name': 'rocm-ebuild', 'rocm-ebuild/release': m.version, 'rocm-ebuild/job': j.id };
    for (const [k, v] of Object.entries(labels)) if (!isLabelKey(k) || !isLabelValue(v)) throw new CiValueError(`label ${k}`, v, 'not a valid Kubernetes label value');
    const script = [
      PREPARE_TREE,
      installNode(true),
      ...fetchOverlay,
      ...tool.install,
      testCommand(j, tool.run, { overlay: OVERLAY, reports: `/shared/reports/${m.version}` }),
      ...(j.gfx === null ? [shellLine(['touch', '--', mark])] : []),
    ];
    const ids = j.gfx ? deviceIdsOf(k8s.devices, j.gfx) : [];
    let placement: Record<string, unknown> = {};
    if (j.gfx && k8s.nodeLabel) placement = { nodeSelector: { [k8s.nodeLabel]: j.gfx } };
    else if (j.gfx && ids.length) {
      placement = {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'amd.com/gpu.device-id', operator: 'In', values: ids }] }],
            },
          },
        },
      };
    }
    const confined = { privileged: false, allowPrivilegeEscalation: false, seccompProfile: { type: 'RuntimeDefault' } };
    const securityContext = j.gpus ? { ...confined, capabilities: { add: [...GPU_CAPABILITIES] } } : confined;
    return {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name, ...namespace, labels },
      spec: {
        backoffLimit: 0,
        activeDeadlineSeconds: j.timeoutMinutes * 60,
        ttlSecondsAfterFinished: 7 * 24 * 3600,
        template: {
          metadata: { labels },
          spec: {
            restartPolicy: 'Never',
            // The build runs code from the overlay and from upstream: it gets no credentials for the cluster.
            automountServiceAccountToken: false,
            ...placement,
            ...(j.gfx === null
              ? {}
              : {
                  initContainers: [
                    {
                      name: 'wait-for-base',
                      image: j.image,
                      command: ['sh', '-c', `until [ -e ${mark} ]; do sleep 60; done`],
                      securityContext: confined,
                      volumeMounts: [{ name: 'shared', mountPath: CI_PATHS.pkgdir, subPath: 'binpkgs' }],
                    },
                  ],
                }),
            containers: [
              {
                name: 'test',
                image: j.image,
                workingDir: '/work',
                command: ['sh', '-c', script.join(' && ')],
                env: [{ name: 'ROCM_EBUILD_IN_CONTAINER', value: 'kubernetes' }],
                resources: j.gpus ? { limits: { 'amd.com/gpu': 1 } } : { requests: { cpu: '4', memory: '16Gi' } },
                securityContext,
                volumeMounts: [
                  { name: 'work', mountPath: '/work' },
                  { name: 'shared', mountPath: CI_PATHS.pkgdir, subPath: 'binpkgs' },
                  { name: 'shared', mountPath: CI_PATHS.distdir, subPath: 'distfiles' },
                  { name: 'shared', mountPath: '/shared/reports', subPath: 'reports' },
                ],
              },
            ],
            volumes: [
              { name: 'work', emptyDir: {} },
              { name: 'shared', persistentVolumeClaim: { claimName: k8s.claim } },
            ],
          },
        },
      },
    };
  });
  const comment = [
    ...header('Kubernetes Jobs', m, options, tool, trusts(k8s)),
    `kubectl apply -f this file; kubectl wait --for=condition=complete job -l rocm-ebuild/release=${m.version}`,
  ];
  return emitYaml(
    [claim, ...jobs].map((value, i) => ({ value, ...(i === 0 ? { comment } : {}) })),
    { documentMarkers: true },
  );
}

/** The values Kubernetes and git constrain, checked before anything is generated (exit 2 naming the flag). */
export function checkK8sOptions(k8s: Omit<K8sOptions, 'devices'>): void {
  const bad = (flag: string, value: string, what: string) => new CiValueError(flag, value, `not ${what}`);
  if (!isGitUrl(k8s.repo)) throw bad('--repo', k8s.repo, 'a git URL the pods can fetch (https://, ssh://, git:// or user@host:path)');
  if (!/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(k8s.commit)) throw bad('--repo-commit', k8s.commit, 'a full commit id (40 or 64 lower-case hex digits): the overlay commit the pods test; a branch can move');
  if (!isDnsSubdomain(k8s.claim)) throw bad('--claim', k8s.claim, 'a PersistentVolumeClaim name (lower-case letters, digits, - and ., at most 253)');
  if (!QUANTITY.test(k8s.claimSize)) throw bad('--claim-size', k8s.claimSize, 'a storage quantity such as 200Gi');
  if (k8s.namespace !== undefined && !isDnsLabel(k8s.namespace)) throw bad('--namespace', k8s.namespace, 'a namespace name (lower-case letters, digits and -, at most 63)');
  if (k8s.nodeLabel !== undefined && !isLabelKey(k8s.nodeLabel)) throw bad('--node-label', k8s.nodeLabel, 'a label key such as rocm.gentoo.org/gfx');
}
