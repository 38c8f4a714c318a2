"""Vianna et al. 2013: a precedence tree over approximate MVA for MapReduce jobs.

* :mod:`predict.vianna.mva` -- exact and approximate MVA (eqs. 1-6).
* :mod:`predict.vianna.estimates` -- P_A estimates: fork/join and Tripathi (section 4.3).
* :mod:`predict.vianna.tree` -- the execution timeline and precedence tree (section 4.2).
* :mod:`predict.vianna.layout` -- task classes and placement, per task or aggregated.
* :mod:`predict.vianna.model` -- the iterative solver (Fig. 2b): :func:`~predict.vianna.model.solve`.
* :mod:`predict.vianna.predictor` -- the ``vianna`` model of the prediction core.
* :mod:`predict.vianna.qnsim` -- the same queuing network simulated task by task (section 5.1's reference).
"""
