"""Mode `profile`: one test case under Nsight Compute, in the job's sandbox, read back into a `ProfileReport`."""
