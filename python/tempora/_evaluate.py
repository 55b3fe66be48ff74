"""tempora.evaluate: the benchmark's metrics of a method's output, on one
problem (_scoring.evaluate_problem) or on a suite's problems
(ProblemSet.evaluate). Its own module, above both, so that neither imports
the other."""

from typing import TYPE_CHECKING, Any, Dict, Optional, Sequence, Union, overload

from ._bench import MethodFunc, Output, ProblemSet
from ._binary import StrPath
from ._scoring import Scores, evaluate_problem

if TYPE_CHECKING:
    import pandas


@overload
def evaluate(problem: StrPath, scores: Scores, method: Optional[str] = None, mode: Optional[str] = None,
             binary: Optional[StrPath] = None) -> Dict[str, float]: ...


@overload
def evaluate(problem: ProblemSet, scores: Union[MethodFunc, Sequence[Output]], method: Optional[str] = None,
             mode: Optional[str] = None, binary: Optional[StrPath] = None, *,
             compare: Optional[Sequence[str]] = None, workers: Optional[int] = None,
             verbose: bool = False) -> "pandas.DataFrame": ...


def evaluate(problem: Union[StrPath, ProblemSet], scores: Any, method: Optional[str] = None,
             mode: Optional[str] = None, binary: Optional[StrPath] = None, *,
             compare: Optional[Sequence[str]] = None, workers: Optional[int] = None,
             verbose: bool = False) -> "Union[Dict[str, float], pandas.DataFrame]":
    """Score a method's output against the ground truth of synthetic
    problems, with the benchmark's metrics.

    On one problem (problem a directory written by tempora synth or
    tempora problems; scores an Explanation, a D x L matrix of cell scores,
    or an M x D x L array of per-instance attributions for the first M
    instances, M x K x D x L for a model of K outputs): ``tempora
    evaluate``'s metrics (feature and timestep power
    and FDR, AUROC and AUPRC, and for attributions the per-instance metrics
    of docs/records.md) as a dict from metric name to value.

    On a suite (problem a ProblemSet from tempora.problems; scores a
    function called with each BenchProblem that returns its output, or one
    output per problem): the benchmark. The outputs become records of the
    method (default name "mine"), tempora's methods compare (default: the
    suite's methods; () for none) run on the same problems, and the result
    is the report's comparison as a pandas DataFrame: one row per method
    (and setting), the mean of every metric over the models and its
    standard error (column METRIC_se), the models and the median runtime
    in seconds. Records and report stay below the set's dir (runs/METHOD,
    builtin, report), so ``tempora report`` can redraw them.

    method names the method the scores come from (default: the
    explanation's); a method the program knows is scored with its own
    selection rule and tests, any other name with the baselines' top-n rule.
    mode ("top-n" or "all-non-zero") overrides the selection rule.
    """
    if isinstance(problem, ProblemSet):
        return problem.evaluate(scores, method=method or "mine", compare=compare, mode=mode, workers=workers,
                                verbose=verbose)
    return evaluate_problem(problem, scores, method=method, mode=mode, binary=binary)
