// Package torture is the chaos harness: it runs several real routinely daemons on one home,
// attacks them with signals and corrupted owner records, and checks from what they recorded
// that no routine slot fired twice and that at most one process owned at a time.
package torture
