// Does not compile: an undeclared identifier.
extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    undeclared_thing(input_a);
}
