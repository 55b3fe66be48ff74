"""tempora for Python: explain temporal black-box models with TIME.

    import tempora
    e = tempora.explain(predict, X, y, task="classification", seed=1)
    print(e)                  # the report: features, p-values, windows
    e.important               # names of the important features
    e.features[0].window      # (start, end) where feature 0 matters

explain runs the tempora command-line program (binary=, the TEMPORA
environment variable, the program built into the package, or PATH) and
answers its batches with predict from this process; it takes NumPy arrays
and pandas DataFrames, and scikit-learn, PyTorch and Keras-style models.
A model may return several outputs per instance (a predict_proba of K ≥ 3
classes, forecast horizons, the steps of a sequence-to-sequence network;
outputs=): e.outputs holds each output's results. e.to_dataframe(),
e.plot() and the notebook table show the result; a local method (OCC,
TimeSHAP, LIME) also gives e.attributions, each instance's attributions
(e.to_dataframe("attributions"), plot_instance(e, i, time=e_time) to draw
one instance's behind its series with TIME's windows; Attributions(values,
X) wraps any method's array the same way);
as_array(X) is X as explain reads it (NaN where missing), to train or
check a model on. Data the program refuses (an infinity, an instance with
nothing observed, sequences aligned at the other end, a missing target,
...) raises DataError, naming the argument and the instance, feature and
time in X's terms.
method_table() lists the program's methods and their parameters, and
method_doc(method) documents a method's keywords (numpydoc). Problem(dir) loads a synthetic problem written by ``tempora
synth``, with its ground truth, predicts through ``tempora serve`` and
scores explanations against the truth (evaluate); its numpy_model() and
torch_model() are the same model read from model.json (SynthModel), the
module differentiable for tempora.gradients (integrated gradients,
saliency). faithfulness(model, X, y, attributions) measures an explanation
against the user's own model, without truth: deletion and insertion
curves, comprehensiveness and sufficiency, and a global explanation's
claimed cells. problems(suite=...)
writes a suite's problems, and evaluate(problems, my_method) benchmarks a
Python method against tempora's on them (a pandas DataFrame). serve(predict) makes a
script a model program for ``tempora explain -model-cmd``; Client is the
other side, for a program such as ``tempora serve``.
"""

from ._attributions import Attributions, plot_instance
from ._bench import BenchProblem, MethodFunc, Output, ProblemSet, problems
from ._binary import ModelError, StrPath, TemporaError, find_binary
from ._calls import ModelInterrupt, ModelTimeoutError
from ._errors import DataError
from ._evaluate import evaluate
from ._explain import Duration, Hierarchy, as_array, explain
from ._explanation import Accounting, Diagnostics, DrawCount, Explanation, Feature, OutputResult, OutputResults, WindowResult
from ._faithfulness import Change, Claimed, Curve, Faithfulness, faithfulness
from ._help import method_doc
from ._methods import Method, MethodTable, Param, method_table
from ._problem import Problem, TruthFeature
from ._protocol import Client, Predict, ProtocolError, claim_stdout, serve
from ._scoring import Scores, feature_scores, top_features
from ._synthmodel import SynthModel
from . import gradients

__version__ = "0.1.0"

__all__ = [
    "Accounting", "Attributions", "BenchProblem", "Change", "Claimed", "Client", "Curve", "DataError", "Diagnostics", "DrawCount", "Duration", "Explanation", "Faithfulness", "Feature", "Hierarchy", "Method", "MethodFunc", "MethodTable", "ModelError", "ModelInterrupt", "ModelTimeoutError", "Output", "OutputResult", "OutputResults", "Param", "Predict", "Problem", "ProblemSet", "ProtocolError", "Scores", "StrPath", "SynthModel", "TemporaError", "TruthFeature", "WindowResult",
    "as_array", "claim_stdout", "evaluate", "explain", "faithfulness", "feature_scores", "find_binary", "gradients", "method_doc", "method_table", "plot_instance", "problems", "serve", "top_features",
]
