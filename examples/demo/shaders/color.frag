#version 450
layout(location=0) in vec4 c;
layout(location=0) out vec4 o;
void main() { o = c; }
