"""Encoded mechanisms for frequency estimation over large alphabets: unary encoding (UE, RAPPOR,
OUE, UE-LIP), IDUE for ID-LDP, padding-and-sampling for item sets (IDUE-PS), local hashing
(LH-LIP, OLH). Each module pairs the client's randomizer with the curator's estimator, its exact
variance and an exact privacy audit."""

from . import hashing, idue, itemset, ue_lip, unary

__all__ = ["hashing", "idue", "itemset", "ue_lip", "unary"]
