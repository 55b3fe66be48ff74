// Command newmethod is the whole tempora command line with one more
// method, mean occlusion (see occlusion.go): "newmethod explain -method
// occlusion", "newmethod run -methods TIME,occlusion", merge, report and
// export (whose jobs run this program) all know it.
package main

import "github.com/tempora-dev/tempora/cli"

func main() { cli.Main(Method) }
