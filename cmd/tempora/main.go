// Command tempora explains temporal black-box models with TIME and
// benchmarks explanation methods on synthetic problems with known ground
// truth. It is the command line of package cli; run "tempora -h" for the
// commands.
package main

import "github.com/tempora-dev/tempora/cli"

func main() { cli.Main() }
