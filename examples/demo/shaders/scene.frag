#version 450
layout(location = 0) in vec2 t;
layout(location = 1) in vec4 c;
layout(set = 0, binding = 4) uniform sampler2D tex;
layout(location = 0) out vec4 o;
void main() { o = texture(tex, t) * c; }
