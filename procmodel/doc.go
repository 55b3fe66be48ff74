// Package procmodel runs a user's model — in Python, R, Julia, Go or any
// language — as a child process and presents it as a tempora.Model, so that
// tempora can explain real models without Go code.
//
// # Protocol
//
// The parent writes requests to the child's standard input and reads answers
// from its standard output; the child's standard error is passed through. All
// integers are little-endian uint32, all values little-endian IEEE-754
// float64. The protocol has one version, Version (2), carried by every
// frame. docs/protocol.md is the full specification; in short:
//
//	hello    (child, once, when ready)  "TMPH" 2 F M D L CRC [K]: flags F = H + 2·O;
//	                                    H = 1 when the child holds data of shape
//	                                    M×D×L and CRC-32 CRC from the start, else
//	                                    H = M = D = L = CRC = 0; O = 1 when K, the
//	                                    outputs per instance (≥ 2), follows, else 1
//	request  (parent)                   "TMPQ" 2 M D L, then M·D·L values
//	                                    in row-major order: (i, j, t) at (i·D+j)·L+t
//	answer   (child)                    "TMPR" 0 M·K, then M·K predictions
//	                                    (instance-major), or "TMPR" 1 n, then an
//	                                    n-byte UTF-8 error message
//	resident (parent)                   "TMPD" 2 M D L S offset, then M·D·L values
//	                                    (S = 0) or none (S = 1: shared buffer);
//	                                    answered with "TMPR" 0 0
//	blocks   (parent)                   "TMPP" 2 B R V S offset, B block descriptors
//	                                    (lo hi start end F, then F features), then
//	                                    V values (S = 0) or none (S = 1: shared buffer);
//	                                    answered with R·K predictions
//	shutdown (parent)                   closes the child's standard input
//
// Predictions are probabilities of class 1 for classification and real
// values for regression, or, for a model of K outputs (tempora.Outputs:
// class probabilities, horizons, output steps), K of them per instance;
// values may be NaN (missing). A model of one output announces nothing:
// its frames are those of a model written before outputs existed.
// Model.Outputs, Conn.Outputs and Pool.Outputs return the K a model
// announced, and Predict takes x.M·K predictions; ServeOutputs serves a
// model of K outputs. A model that
// announces another version is refused at start (ErrProtocol), a model
// side of version 1 with a message saying how to upgrade it (serve it with
// the current Python package's tempora.serve or with Serve). Model, Conn
// and a Pool of them hold data (resident.Model; Pool.Held): the data is
// sent once, or not at all when the hello says the child holds it, then
// each draw of an explainer as the block it perturbs.
//
// # Use
//
// Start launches the command (SplitCommand turns a command line into one) in
// its own process group and waits for the hello. The returned Model
// serialises concurrent Predict calls over the one process, optionally
// splits large batches (Options.MaxBatch), and enforces a time limit per
// request (Options.Timeout, which also bounds the wait for the hello frame
// unless Options.StartTimeout is set). A crash, a malformed or wrong-length answer, an
// error frame, a time-out or a cancelled context becomes an error wrapping
// ErrExited, ErrProtocol, ErrModel or ErrTimeout, with the child's exit status
// and the tail of its standard error; the process group is then killed and
// the Model returns that error from then on. Close ends the child.
//
// StartPool starts several copies of a command as a Pool (NewHeldPool
// makes one of connections), which hands each call, whole, to an idle
// copy, so that they answer in parallel; the results do not depend on the
// number of copies. Attach (and AttachFD, for
// inherited file descriptors) presents a model that is already running, on
// the other end of a connected socket, as a Conn: the same frames, up to two
// requests in flight, and optionally a shared memory buffer that carries the
// batches instead of the socket. The Python package starts tempora this way
// so that the model stays in the user's process.
//
// Serve is the child's side in Go (see examples/gomodel);
// examples/python/serve_model.py is the child's side in Python.
package procmodel
