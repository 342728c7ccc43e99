package worker

// longScriptNice is the nice value of a thread that runs a script past its
// first 100 ms (luaredis.WhenLong). Such a script already pauses for
// three quarters of its time; at nice 10 the kernel also gives its run
// slices to any other learner's request that is waiting for the CPU (a
// nice-10 thread weighs a ninth of a nice-0 one), so ten learners running
// scripts into their deadline no longer slow the lines of a thousand
// others. On a machine with CPU to spare it runs as fast as before.
const longScriptNice = 10

// A goroutine whose thread lowerPriority lowered must end without
// unlocking it: an unprivileged process cannot raise a priority again, so
// Go then discards the thread instead of running other goroutines on it.
