// Command bench measures Routinely's performance figures (issue 8) against the real binary and
// the packages' Go benchmarks, and prints them as one Markdown table (optionally into README.md).
package main
