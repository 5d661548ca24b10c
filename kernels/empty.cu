// An empty kernel: the launch-overhead benchmark launches it 100,000 times.
extern "C" __global__ void empty() {}
