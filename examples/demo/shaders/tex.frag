#version 450
layout(location=0) in vec2 t;
layout(set=0, binding=4) uniform sampler2D tex;
layout(location=0) out vec4 o;
void main() { o = texture(tex, t); }
