"""Data, training, export and artifacts: the learned side of Classify.

Terms (docs/glossary.md holds them all):

- *Exact path*: Classify's first step, the exact solver with a per-state node budget
  that belongs to the model version (``boaf.models.exact_path``). A state it settles
  is answered exactly (P(solvable) 1 or 0, marked exact).
- *Residue*: the states the exact path leaves open, the only ones the learned model
  answers; a residue set is such states of one distribution with exact labels
  (``boaf.models.residue``). The *hard remainder* is the residue of the hard
  distributions a model is trained on (``boaf.models.hard``).
- *Probe* and *progress*: two small budgeted searches whose figures are model inputs,
  never answers (``boaf.models.inputs``, ``boaf.search.progress``).
"""
