"""Judge a published closed form: where it holds, where it fails, and a counterexample.

    python examples/05_judge_a_closed_form.py

RR-LIP (LIP-TDSC Thm 3) is claimed optimal for the MMSE under eps-LIP. `verify` compares it, case
by case, with the exact audit and the certified optimum: it is infeasible where the prior has a
symbol rarer than 1/(e^eps + 1) (the condition it finds, e^eps - (1 - P_m) <= P_m e^(2 eps)), and
holds elsewhere.
"""

from channelopt.theorems import get, verify

for tid in ("tdsc-thm3", "ksr-subset-rr"):
    rep = verify.run([get(tid)], quick=True, progress=False)[0]
    doc = rep.to_json()
    print(f"{tid} ({doc['citation']}): {doc['verdict']} on {doc['cases']} cases {doc['counts']}")
    if "condition_found" in doc:
        print("   holds when:", doc["condition_found"])
    if doc.get("worst"):
        w = doc["worst"]
        print(f"   worst case: {w['kind']} at prior {w['inputs']['prior']}, eps {w['inputs']['epsilon']}, gap {w['gap']:.3g}")
