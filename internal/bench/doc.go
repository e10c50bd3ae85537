// Command bench measures Routinely's performance figures (the README's table) against the real binary and
// the packages' Go benchmarks, and prints them as one Markdown table (optionally into README.md).
package main
