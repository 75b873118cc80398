// Package packtest writes synthetic document histories into a store the
// way the repository does (content objects, a txn, a version with its
// parent, the head ref moved in the same synced batch), for the pack
// tests and benchmarks. Histories are deterministic for a given seed.
package packtest
