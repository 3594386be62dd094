"""The OpenSeesPy SDOF of the genericClient tests: its column a ``genericClient`` element
(``client`` mode, port in argv) or a ``zeroLength`` with ``uniaxialMaterial BoucWen``
(``local`` mode), each run in its own subprocess (OpenSees keeps one model per process).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np

# Bouc–Wen in SI: k [N/m], alpha, A, beta/gamma [1/m^n], n.
K, ALPHA, A, BETA, GAMMA, N = 2.0e6, 0.1, 1.0, 60.0, 40.0, 1.0
MASS = 1.0e3  # kg; T = 2π sqrt(m/k) ≈ 0.14 s
DT, N_STEPS = 0.005, 400
SUBPROCESS_TIMEOUT = 60.0

SCRIPT = textwrap.dedent(
    """
    import json, math, sys
    import openseespy.opensees as ops

    mode, out = sys.argv[1], sys.argv[2]
    K, ALPHA, A, BETA, GAMMA, N, MASS, DT, N_STEPS = {constants}
    ops.wipe()
    ops.model('basic', '-ndm', 1, '-ndf', 1)
    ops.node(1, 0.0)
    ops.node(2, 0.0)
    ops.fix(1, 1)
    ops.mass(2, MASS)
    if mode == 'client':
        port = int(sys.argv[3])
        ops.element('genericClient', 1, '-node', 1, 2, '-dof', 1, '-dof', 1,
                    '-server', port, '127.0.0.1')
    else:
        # OpenSees' argument order: alpha ko n gamma beta Ao deltaA deltaNu deltaEta
        ops.uniaxialMaterial('BoucWen', 1, ALPHA, K, N, GAMMA, BETA, A, 0.0, 0.0, 0.0)
        ops.element('zeroLength', 1, 1, 2, '-mat', 1, '-dir', 1)
    # a 4 Hz sine of ground acceleration, 2 g peak, for 1 s: the column yields
    accel = [2.0 * 9.81 * math.sin(2 * math.pi * 4.0 * i * DT) * (1.0 if i * DT < 1.0 else 0.0)
             for i in range(N_STEPS + 1)]
    ops.timeSeries('Path', 1, '-dt', DT, '-values', *accel)
    ops.pattern('UniformExcitation', 1, 1, '-accel', 1)
    ops.rayleigh(2 * 0.02 * 2 * math.pi / 0.14, 0.0, 0.0, 0.0)
    ops.constraints('Plain')
    ops.numberer('Plain')
    ops.system('FullGeneral')
    ops.test('NormDispIncr', 1.0e-12, 50)
    ops.algorithm('Newton')
    ops.integrator('Newmark', 0.5, 0.25)
    ops.analysis('Transient')
    t, u, f = [], [], []
    for _ in range(N_STEPS):
        if ops.analyze(1, DT) != 0:
            raise SystemExit('analysis failed at t = %g' % ops.getTime())
        t.append(ops.getTime())
        u.append(ops.nodeDisp(2, 1))
        f.append(ops.eleResponse(1, 'force')[1])
    with open(out, 'w') as fh:
        json.dump({{'t': t, 'u': u, 'f': f}}, fh)
    ops.wipe()   # destroys the genericClient element: it sends DIE
    """
).format(constants=(K, ALPHA, A, BETA, GAMMA, N, MASS, DT, N_STEPS))


def _run_opensees(tmp_path, mode, *extra):
    script = tmp_path / "sdof.py"
    script.write_text(SCRIPT)
    out = tmp_path / f"{mode}.json"
    proc = subprocess.run(
        [sys.executable, str(script), mode, str(out), *map(str, extra)],
        capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT,
    )
    assert proc.returncode == 0, f"OpenSees ({mode}) failed:\n{proc.stdout}\n{proc.stderr}"
    data = json.loads(out.read_text())
    return {k: np.asarray(v) for k, v in data.items()}


