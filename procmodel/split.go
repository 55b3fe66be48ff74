package procmodel

import (
	"fmt"
	"strings"
)

// SplitCommand splits a command line such as `python3 serve_model.py
// --model "my model.pt"` into words the way a POSIX shell would for a simple
// command: words are separated by unquoted blanks; single quotes keep
// everything literally; double quotes keep everything except that a
// backslash escapes ", \, $ and `; an unquoted backslash escapes the next
// character. It does not expand variables, globs or ~, and it does not
// interpret pipes or redirections (run "sh -c '...'" for that). It returns an
// error for an unterminated quote or a trailing backslash, and for a line
// without words.
func SplitCommand(line string) ([]string, error) {
	var (
		words  []string
		cur    strings.Builder
		inWord bool
	)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			inWord = true
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("procmodel: unterminated single quote in command %q", line)
			}
			cur.WriteString(line[i+1 : i+1+end])
			i += end + 1
		case c == '"':
			inWord = true
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\"\\$`", line[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(line[i])
			}
			if i >= len(line) {
				return nil, fmt.Errorf("procmodel: unterminated double quote in command %q", line)
			}
		case c == '\\':
			if i+1 >= len(line) {
				return nil, fmt.Errorf("procmodel: trailing backslash in command %q", line)
			}
			inWord = true
			i++
			cur.WriteByte(line[i])
		default:
			inWord = true
			cur.WriteByte(c)
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("procmodel: empty model command %q", line)
	}
	return words, nil
}
