"""tempora for Python: explain temporal black-box models with TIME.

    import tempora
    e = tempora.explain(predict, X, y, task="classification", seed=1)
    print(e)                  # the report: features, p-values, windows
    e.important               # names of the important features
    e.features[0].window      # (start, end) where feature 0 matters

explain runs the tempora command-line program (binary=, the TEMPORA
environment variable, or PATH) and answers its batches with predict from
this process. Problem(dir) loads a synthetic problem written by ``tempora
synth``, with its ground truth, and predicts through ``tempora serve``.
serve(predict) makes a script a model program for ``tempora explain
-model-cmd``.
"""

from ._binary import ModelError, TemporaError, find_binary
from ._calls import ModelInterrupt, ModelTimeoutError
from ._explain import explain
from ._explanation import Accounting, DrawCount, Explanation, Feature
from ._problem import Problem, TruthFeature
from ._protocol import serve

__version__ = "0.1.0"

__all__ = [
    "Accounting", "DrawCount", "Explanation", "Feature", "ModelError", "ModelInterrupt", "ModelTimeoutError", "Problem",
    "TemporaError", "TruthFeature",
    "explain", "find_binary", "serve",
]
