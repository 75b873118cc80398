// Command taskbench measures the durable task runner (internal/task):
// no-op tasks go through enqueue -> run -> succeed, every transition a
// synced Pebble batch, with 1 and 8 workers. It prints tasks/s and the
// queue latency (enqueue commit start to handler start) percentiles.
//
//	go run ./bench/taskbench -n 20000 -workers 1,8
package main
